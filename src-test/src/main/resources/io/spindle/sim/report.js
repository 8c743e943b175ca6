// Builds the report's charts from the embedded JSON report with ECharts (SVG renderer, so the charts are DOM
// elements a headless browser can count). Every chart div gets data-rendered="true" once drawn; the body gets
// data-charts-rendered=<count>. scripts/check-report reads those after the page ran.
(function () {
  var report = JSON.parse(document.getElementById('report-data').textContent);
  var runs = report.runs;
  var charts = [];
  var root = document.getElementById('charts');

  function section(title, note) {
    var h = document.createElement('h2');
    h.textContent = title;
    root.appendChild(h);
    if (note) {
      var p = document.createElement('p');
      p.className = 'note';
      p.textContent = note;
      root.appendChild(p);
    }
  }

  function chart(id, option, height) {
    var div = document.createElement('div');
    div.className = 'chart';
    div.id = id;
    div.style.height = (height || 340) + 'px';
    root.appendChild(div);
    var c = echarts.init(div, null, {renderer: 'svg'});
    option.animation = false;
    c.setOption(option);
    div.setAttribute('data-rendered', 'true');
    charts.push(c);
  }

  function days(series, n) {
    var out = [];
    for (var i = 0; i < n; i++) {
      out.push(+(((i + 0.5) * series.bucketSeconds) / 86400).toFixed(3));
    }
    return out;
  }

  function lineOption(title, yName, pick, yMax) {
    return {
      title: {text: title, left: 'center', textStyle: {fontSize: 14}},
      tooltip: {trigger: 'axis'},
      legend: {top: 24, type: 'scroll'},
      grid: {top: 64, left: 64, right: 24, bottom: 48},
      xAxis: {type: 'value', name: 'days since first submission', nameLocation: 'middle', nameGap: 28},
      yAxis: {type: 'value', name: yName, max: yMax},
      series: runs.map(function (r) {
        var values = pick(r);
        var x = days(r.timeSeries, values.length);
        return {name: r.policy, type: 'line', showSymbol: false, sampling: 'lttb',
          data: values.map(function (v, i) { return [x[i], v]; })};
      })
    };
  }

  var gpus = report.cluster.gpus;
  section('GPU utilisation over time',
      'Busy GPUs (running jobs) as a share of the cluster\'s ' + gpus + ' GPUs, time-averaged per bucket.');
  chart('chart-utilisation', lineOption('Busy GPUs (%)', '%', function (r) {
    return r.timeSeries.busyGpus.map(function (v) { return +(100 * v / gpus).toFixed(3); });
  }, 100));

  section('Waiting jobs over time', 'Jobs submitted and not yet started, time-averaged per bucket.');
  chart('chart-waiting', lineOption('Waiting jobs', 'jobs', function (r) { return r.timeSeries.waitingJobs; }));

  section('Queueing delay distribution', 'Percentile of finished jobs (y) that waited at most x seconds.');
  chart('chart-delay-cdf', {
    title: {text: 'Queueing delay CDF', left: 'center', textStyle: {fontSize: 14}},
    tooltip: {trigger: 'axis'},
    legend: {top: 24, type: 'scroll'},
    grid: {top: 64, left: 64, right: 24, bottom: 48},
    xAxis: {type: 'log', name: 'queueing delay (s, log; 0 shown as 1)', nameLocation: 'middle', nameGap: 28, min: 1},
    yAxis: {type: 'value', name: 'percentile', min: 0, max: 100},
    series: runs.map(function (r) {
      return {name: r.policy, type: 'line', step: 'end', showSymbol: false,
        data: r.queueDelayPercentilesSeconds.map(function (v, p) { return [Math.max(1, v), p]; })};
    })
  });

  section('JCT and queueing delay by policy', 'Mean, median and p99 over finished jobs, next to the lower bound.');
  var metrics = ['mean JCT', 'p50 JCT', 'p99 JCT', 'mean queue', 'p99 queue'];
  chart('chart-jct', {
    title: {text: 'Seconds', left: 'center', textStyle: {fontSize: 14}},
    tooltip: {trigger: 'axis'},
    legend: {top: 24, type: 'scroll'},
    grid: {top: 64, left: 80, right: 24, bottom: 48},
    xAxis: {type: 'category', data: metrics},
    yAxis: {type: 'log', name: 's (log)', min: 1},
    series: runs.map(function (r) {
      return {name: r.policy, type: 'bar', data: [r.jctSeconds.mean, r.jctSeconds.p50, r.jctSeconds.p99,
        r.queueDelaySeconds.mean, r.queueDelaySeconds.p99].map(function (v) { return Math.max(1, v); })};
    }).concat([{name: 'lower bound (mean duration)', type: 'line', symbol: 'diamond',
      data: [runs.length ? runs[0].lowerBounds.jctSeconds : 0, null, null, null, null]}])
  });

  section('Queue share against fair share',
      'Per queue: time-averaged share of the cluster each policy gave it, and the time-averaged H-DRF fair share of '
      + 'the cluster\'s queue configuration (the same yardstick for every policy).');
  runs.forEach(function (r, k) {
    chart('chart-share-' + k, {
      title: {text: r.policy + ': mean share vs fair share (% of cluster)', left: 'center',
        textStyle: {fontSize: 14}},
      tooltip: {trigger: 'axis'},
      legend: {top: 24},
      grid: {top: 64, left: 56, right: 24, bottom: 64},
      xAxis: {type: 'category', data: r.queues.map(function (q) { return q.queue; }), axisLabel: {rotate: 30}},
      yAxis: {type: 'value', name: '%'},
      series: [
        {name: 'share', type: 'bar', data: r.queues.map(function (q) { return +(100 * q.meanShare).toFixed(3); })},
        {name: 'fair share', type: 'bar', data: r.queues.map(function (q) {
          return +(100 * q.meanFairShare).toFixed(3); })},
        {name: 'guarantee', type: 'line', symbol: 'rect', data: r.queues.map(function (q) {
          return +(100 * q.guaranteeShare).toFixed(3); })}
      ]
    }, 300);
  });

  document.body.setAttribute('data-charts-rendered', String(charts.length));
  window.addEventListener('resize', function () { charts.forEach(function (c) { c.resize(); }); });
})();
