package io.spindle.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpHandler;
import io.spindle.client.cli.SpindleCli;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.AppId;
import io.spindle.core.status.AppHistory;
import io.spindle.core.status.Explanation;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authentication.client.AuthenticatedURL;
import org.apache.hadoop.security.authentication.client.KerberosAuthenticator;
import org.apache.hadoop.security.authentication.util.KerberosUtil;
import org.apache.kerby.kerberos.kerb.client.KrbClient;
import javax.security.auth.Subject;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.LoginContext;
import javax.security.auth.login.LoginException;
import org.ietf.jgss.GSSContext;
import org.ietf.jgss.GSSException;
import org.ietf.jgss.GSSManager;
import org.ietf.jgss.GSSName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPNEGO on Spindle's HTTP server against a real KDC (MiniKdc): principals HTTP/localhost (the server), admin (holds
 * the root queue's administer ACL in the fake view), bob (does not), ops/admin (admin by an auth_to_local rule) and
 * carol (no rule maps her). Every path needs authentication; admin operations go by the Kerberos user's short name;
 * {@code scripts/spindle}'s client negotiates too, in this JVM and in one of its own with a ticket cache.
 *
 * <p>Tagged "kerberos": Kerberos and UserGroupInformation are JVM-wide, so these run in a JVM of their own
 * (yarn-scheduler/pom.xml).
 */
@Tag("kerberos")
class SpnegoTest {

  private static final String[] READ_PATHS = {"/", "/api/v1/status", "/api/v1/queues", "/metrics"};
  private static final String REFRESH = "/api/v1/admin/refresh-queues";

  @TempDir
  static Path dir;
  private static MiniKdc kdc;
  private static String realm;
  private static File httpKeytab;
  private static FakeView view;
  private static SpindleWeb web;
  private static String base;
  private static UserGroupInformation admin;
  private static UserGroupInformation bob;
  private static final HttpClient PLAIN = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    File kdcDir = Files.createDirectories(dir.resolve("kdc")).toFile();
    kdc = new MiniKdc(MiniKdc.createConf(), kdcDir);
    kdc.start();
    realm = kdc.getRealm();
    httpKeytab = dir.resolve("http.keytab").toFile();
    File adminKeytab = dir.resolve("admin.keytab").toFile();
    File bobKeytab = dir.resolve("bob.keytab").toFile();
    kdc.createPrincipal(httpKeytab, "HTTP/localhost");
    kdc.createPrincipal(adminKeytab, "admin");
    kdc.createPrincipal(bobKeytab, "bob");
    kdc.createPrincipal(dir.resolve("ops.keytab").toFile(), "ops/admin");
    kdc.createPrincipal(dir.resolve("carol.keytab").toFile(), "carol");
    Configuration security = new Configuration();
    security.set("hadoop.security.authentication", "kerberos");
    // ops/admin is admin; carol is in the realm but no rule names her.
    security.set("hadoop.security.auth_to_local", String.join("\n",
        "RULE:[1:$1@$0](admin@" + realm + ")s/@.*//",
        "RULE:[1:$1@$0](bob@" + realm + ")s/@.*//",
        "RULE:[2:$1/$2@$0](ops/admin@" + realm + ")s/.*/admin/",
        "RULE:[2:$1@$0](HTTP@" + realm + ")s/.*/http/"));
    UserGroupInformation.setConfiguration(security);
    admin = UserGroupInformation.loginUserFromKeytabAndReturnUGI("admin@" + realm, adminKeytab.getPath());
    bob = UserGroupInformation.loginUserFromKeytabAndReturnUGI("bob@" + realm, bobKeytab.getPath());

    view = new FakeView();
    Configuration conf = serverConf();
    conf.set(HttpAuthentication.PRINCIPAL, "HTTP/localhost@" + realm);
    conf.set(HttpAuthentication.KEYTAB, httpKeytab.getPath());
    web = SpindleWeb.start(conf, "/metrics", METRICS, view);
    base = "http://localhost:" + web.address().orElseThrow().getPort();
  }

  @AfterAll
  static void stop() {
    if (web != null) {
      web.close();
    }
    if (kdc != null) {
      kdc.stop();
    }
    UserGroupInformation.reset();
  }

  @Test
  void everyPathWithoutATokenIs401AskingForNegotiate() throws Exception {
    List<String> paths = new ArrayList<>(List.of(READ_PATHS));
    paths.add("/api/v1/apps/application_1_1/why");
    for (String path : paths) {
      HttpResponse<String> r = plain("GET", path, Map.of());
      assertThat(r.statusCode()).as(path).isEqualTo(401);
      assertThat(r.headers().firstValue("WWW-Authenticate")).as(path).contains("Negotiate");
      assertThat(error(r.body())).as(path).contains("Kerberos (SPNEGO)");
    }
    int before = view.refreshes.get();
    HttpResponse<String> refresh = plain("POST", REFRESH + "?user.name=admin", Map.of());
    assertThat(refresh.statusCode()).isEqualTo(401);
    assertThat(refresh.headers().firstValue("WWW-Authenticate")).contains("Negotiate");
    assertThat(plain("OPTIONS", "/api/v1/status", Map.of()).statusCode()).isEqualTo(401);
    assertThat(view.refreshes).hasValue(before);
  }

  @Test
  void aGarbageOrForgedCredentialIs401WithAReadableError() throws Exception {
    int before = view.refreshes.get();
    HttpResponse<String> garbage = plain("GET", "/api/v1/status",
        Map.of("Authorization", "Negotiate " + Base64.getEncoder().encodeToString("garbage".getBytes())));
    assertThat(garbage.statusCode()).isEqualTo(401);
    assertThat(garbage.headers().firstValue("WWW-Authenticate")).contains("Negotiate");
    assertThat(error(garbage.body())).contains("Negotiate token was refused").contains("HTTP/localhost@" + realm);

    HttpResponse<String> notBase64 = plain("GET", "/api/v1/status", Map.of("Authorization", "Negotiate !!!"));
    assertThat(notBase64.statusCode()).isEqualTo(401);
    assertThat(error(notBase64.body())).contains("not base64");

    HttpResponse<String> forged = plain("POST", REFRESH, Map.of("Cookie",
        "hadoop.auth=\"u=admin&p=admin@" + realm + "&t=kerberos&e=99999999999999&s=Zm9yZ2Vk\""));
    assertThat(forged.statusCode()).isEqualTo(401);
    assertThat(view.refreshes).hasValue(before);
  }

  @Test
  void readViewsServeAnyAuthenticatedUser() throws Exception {
    for (String path : READ_PATHS) {
      HttpResponse<String> r = negotiated(bob, "GET", path);
      assertThat(r.statusCode()).as(path).isEqualTo(200);
      assertThat(r.headers().firstValue("WWW-Authenticate")).as(path).hasValueSatisfying(
          v -> assertThat(v).startsWith("Negotiate "));
    }
    assertThat(negotiated(bob, "GET", "/api/v1/status").body()).contains("\"rmId\" : \"rm1\"");
    assertThat(negotiated(bob, "GET", "/metrics").body()).contains("spindle_up 1");
  }

  @Test
  void theAdminRefreshesTheQueuesAndOthersAreRefused() throws Exception {
    int before = view.refreshes.get();
    HttpResponse<String> ok = negotiated(admin, "POST", REFRESH);
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).contains("queue configuration reloaded");
    assertThat(view.refreshes).hasValue(before + 1);
    assertThat(view.askedAbout).contains("admin");

    // user.name is pseudo authentication: ignored once Kerberos says who is asking.
    HttpResponse<String> refused = negotiated(bob, "POST", REFRESH + "?user.name=admin");
    assertThat(refused.statusCode()).isEqualTo(403);
    assertThat(error(refused.body())).contains("user bob may not refresh-queues");
    assertThat(view.refreshes).hasValue(before + 1);
  }

  @Test
  void theUserIsThePrincipalsShortNameByAuthToLocal() throws Exception {
    HttpResponse<String> ok = negotiated(login("ops/admin", "ops.keytab"), "POST", REFRESH);
    assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
    assertThat(ok.headers().firstValue("Set-Cookie")).hasValueSatisfying(c -> assertThat(c).contains("u=admin&"));

    // UserGroupInformation cannot even log carol in (no short name), so a bare JAAS login.
    HttpResponse<String> unmapped = negotiated(login("carol", "carol.keytab"), "GET", "/api/v1/status");
    assertThat(unmapped.statusCode()).isEqualTo(403);
    assertThat(error(unmapped.body())).contains("principal carol@" + realm + " maps to no user")
        .contains("hadoop.security.auth_to_local");
  }

  @Test
  void theCookieFromOneNegotiationAuthenticatesLaterRequests() throws Exception {
    HttpResponse<String> first = negotiated(admin, "GET", "/api/v1/status");
    assertThat(first.statusCode()).isEqualTo(200);
    String setCookie = first.headers().firstValue("Set-Cookie").orElseThrow();
    assertThat(setCookie).startsWith("hadoop.auth=\"u=admin&p=admin@" + realm + "&t=kerberos&e=")
        .endsWith("; Path=/; HttpOnly");
    String cookie = setCookie.substring(0, setCookie.indexOf(';'));
    // No Kerberos here: the signed cookie alone says admin.
    int before = view.refreshes.get();
    HttpResponse<String> refresh = plain("POST", REFRESH, Map.of("Cookie", "theme=dark; " + cookie));
    assertThat(refresh.statusCode()).as(refresh.body()).isEqualTo(200);
    assertThat(refresh.headers().firstValue("Set-Cookie")).isEmpty();
    assertThat(view.refreshes).hasValue(before + 1);
    // Changing the user invalidates the signature.
    HttpResponse<String> tampered = plain("POST", REFRESH, Map.of("Cookie", cookie.replace("u=admin", "u=root")));
    assertThat(tampered.statusCode()).isEqualTo(401);
    assertThat(view.refreshes).hasValue(before + 1);
  }

  @Test
  void hadoopAuthsAuthenticatedUrlGetsThroughInsideAKerberosLogin() throws Exception {
    // Its OPTIONS handshake needs the 200 OptionsFilter gives; its requests carry the JDK's own Negotiate.
    int status = bob.doAs((PrivilegedExceptionAction<Integer>) () -> new AuthenticatedURL(new KerberosAuthenticator())
        .openConnection(URI.create(base + "/api/v1/queues").toURL(), new AuthenticatedURL.Token()).getResponseCode());
    assertThat(status).isEqualTo(200);
  }

  @Test
  void theCliNegotiatesWhenTheServerAsksOrTheClientConfigurationSaysKerberos() throws Exception {
    int before = view.refreshes.get();
    Cli asked = cli(admin, Map.of(), "--url", base, "refresh-queues");
    assertThat(asked.status()).as(asked.out()).isZero();
    assertThat(asked.out()).contains("queue configuration reloaded");
    assertThat(view.refreshes).hasValue(before + 1);

    Path confDir = Files.createDirectories(dir.resolve("client-conf"));
    Files.writeString(confDir.resolve("core-site.xml"), site(Map.of("hadoop.security.authentication", "kerberos")));
    Files.writeString(confDir.resolve("yarn-site.xml"), site(Map.of(SpindleWeb.PORT,
        String.valueOf(web.address().orElseThrow().getPort()), SpindleWeb.BIND_ADDRESS, "localhost")));
    Map<String, String> env = Map.of("HADOOP_CONF_DIR", confDir.toString());
    Cli queues = cli(bob, env, "queues");
    assertThat(queues.status()).as(queues.out()).isZero();
    assertThat(queues.out()).contains("GPUs per queue");
    Cli refused = cli(bob, env, "refresh-queues", "--user", "admin");
    assertThat(refused.status()).isEqualTo(1);
    assertThat(refused.out()).contains("user bob may not refresh-queues").contains("HTTP 403");
    assertThat(view.refreshes).hasValue(before + 1);
  }

  @Test
  void scriptsSpindleInItsOwnJvmUsesTheTicketCache() throws Exception {
    // kinit, as kerby (MiniKdc's KDC) does it: a ticket cache for admin, and nothing else for the new JVM.
    File cache = dir.resolve("krb5cc_admin").toFile();
    KrbClient kinit = new KrbClient(kdc.getKrb5conf().getParentFile());
    kinit.init();
    kinit.storeTicket(kinit.requestTgt("admin@" + realm, dir.resolve("admin.keytab").toFile()), cache);
    int before = view.refreshes.get();
    ProcessBuilder cli = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), "-Djava.security.krb5.conf=" + kdc.getKrb5conf(),
        SpindleCli.class.getName(), "--url", base, "refresh-queues").redirectErrorStream(true);
    cli.environment().remove("HADOOP_CONF_DIR");
    cli.environment().put("KRB5CCNAME", cache.getPath());
    Process p = cli.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(out).isZero();
    assertThat(out).contains("queue configuration reloaded");
    assertThat(view.refreshes).hasValue(before + 1);
  }

  @Test
  void theCliWithoutATicketSaysToKinit() throws Exception {
    // No Subject and no ticket cache: hadoop-auth's authenticator finds no Kerberos credentials.
    Cli noTicket = cli(null, Map.of(), "--url", base, "status");
    assertThat(noTicket.status()).isEqualTo(1);
    assertThat(noTicket.out()).contains("Kerberos (SPNEGO) authentication with " + base).contains("kinit");
  }

  @Test
  void theRmWebUiKeysAreTheDefaultsAndHostIsTheBindAddressesName() throws Exception {
    Configuration conf = serverConf();
    conf.set("yarn.resourcemanager.webapp.spnego-principal", "HTTP/_HOST@" + realm);
    conf.set("yarn.resourcemanager.webapp.spnego-keytab-file", httpKeytab.getPath());
    try (SpindleWeb other = SpindleWeb.start(conf, "/metrics", METRICS, view)) {
      String otherBase = "http://localhost:" + other.address().orElseThrow().getPort();
      assertThat(negotiated(bob, "GET", otherBase + "/api/v1/queues").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void anAdminMayOpenTheMetricsEndpointToScrapersThatCannotNegotiateAndOnlyThat() throws Exception {
    Configuration conf = serverConf();
    conf.set(HttpAuthentication.PRINCIPAL, "HTTP/localhost@" + realm);
    conf.set(HttpAuthentication.KEYTAB, httpKeytab.getPath());
    conf.setBoolean(SpindleWeb.METRICS_UNAUTHENTICATED, true);
    try (SpindleWeb open = SpindleWeb.start(conf, "/metrics", METRICS, view)) {
      String openBase = "http://localhost:" + open.address().orElseThrow().getPort();
      HttpResponse<String> scrape = PLAIN.send(HttpRequest.newBuilder(URI.create(openBase + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(scrape.statusCode()).isEqualTo(200);
      for (String path : List.of("/", "/api/v1/status", "/api/v1/apps")) {
        HttpResponse<String> r = PLAIN.send(HttpRequest.newBuilder(URI.create(openBase + path)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(path).isEqualTo(401);
      }
    }
  }

  @Test
  void withoutAPrincipalOrKeytabTheServerRefusesToStartNamingTheKey() {
    Configuration noKeytab = serverConf();
    noKeytab.set(HttpAuthentication.PRINCIPAL, "HTTP/localhost@" + realm);
    noKeytab.unset("hadoop.http.authentication.kerberos.keytab");
    assertThatThrownBy(() -> SpindleWeb.start(noKeytab, "/metrics", METRICS, view))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs a SPNEGO keytab: set yarn.scheduler.spindle.http.spnego.keytab")
        .hasMessageContaining("yarn.resourcemanager.webapp.spnego-keytab-file");

    Configuration noPrincipal = serverConf();
    noPrincipal.set(HttpAuthentication.KEYTAB, httpKeytab.getPath());
    noPrincipal.unset("hadoop.http.authentication.kerberos.principal");
    assertThatThrownBy(() -> SpindleWeb.start(noPrincipal, "/metrics", METRICS, view))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs a SPNEGO principal: set yarn.scheduler.spindle.http.spnego.principal");

    Configuration missingFile = serverConf();
    missingFile.set(HttpAuthentication.PRINCIPAL, "HTTP/localhost@" + realm);
    missingFile.set(HttpAuthentication.KEYTAB, dir.resolve("nowhere.keytab").toString());
    assertThatThrownBy(() -> SpindleWeb.start(missingFile, "/metrics", METRICS, view))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nowhere.keytab (yarn.scheduler.spindle.http.spnego.keytab) is not a readable file");

    Configuration wrongPrincipal = serverConf();
    wrongPrincipal.set(HttpAuthentication.PRINCIPAL, "HTTP/elsewhere@" + realm);
    wrongPrincipal.set(HttpAuthentication.KEYTAB, httpKeytab.getPath());
    assertThatThrownBy(() -> SpindleWeb.start(wrongPrincipal, "/metrics", METRICS, view))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("cannot log in as HTTP/elsewhere@" + realm);
  }

  /** Kerberos on, port 0 on the loopback address, no SPNEGO keys yet. */
  private static Configuration serverConf() {
    Configuration conf = new Configuration();
    conf.set("hadoop.security.authentication", "kerberos");
    conf.setInt(SpindleWeb.PORT, 0);
    conf.set(SpindleWeb.BIND_ADDRESS, "127.0.0.1");
    return conf;
  }

  private static HttpResponse<String> plain(String method, String path, Map<String, String> headers)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
        .method(method, HttpRequest.BodyPublishers.noBody());
    headers.forEach(b::header);
    return PLAIN.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * One request as {@code user} with a SPNEGO token made here (as curl or a browser would), so the server is tested
   * against a client other than the CLI's.
   */
  private static HttpResponse<String> negotiated(UserGroupInformation user, String method, String path)
      throws Exception {
    URI uri = URI.create(path.startsWith("/") ? base + path : path);
    return withToken(method, uri, user.doAs((PrivilegedExceptionAction<byte[]>) () -> spnegoToken(uri)));
  }

  private static HttpResponse<String> negotiated(Subject user, String method, String path) throws Exception {
    URI uri = URI.create(base + path);
    return withToken(method, uri, Subject.doAs(user, (PrivilegedExceptionAction<byte[]>) () -> spnegoToken(uri)));
  }

  private static byte[] spnegoToken(URI uri) throws GSSException {
    GSSManager gss = GSSManager.getInstance();
    GSSContext context = gss.createContext(gss.createName("HTTP@" + uri.getHost(), GSSName.NT_HOSTBASED_SERVICE),
        KerberosUtil.GSS_SPNEGO_MECH_OID, null, GSSContext.DEFAULT_LIFETIME);
    try {
      return context.initSecContext(new byte[0], 0, 0);
    } finally {
      context.dispose();
    }
  }

  private static HttpResponse<String> withToken(String method, URI uri, byte[] token) throws Exception {
    return PLAIN.send(HttpRequest.newBuilder(uri).method(method, HttpRequest.BodyPublishers.noBody())
        .header("Authorization", "Negotiate " + Base64.getEncoder().encodeToString(token)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** A Kerberos login from a keytab with the JDK's own login module, outside UserGroupInformation. */
  private static Subject login(String name, String keytab) throws LoginException {
    Map<String, String> options = Map.of("useKeyTab", "true", "keyTab", dir.resolve(keytab).toString(),
        "principal", name + "@" + realm, "storeKey", "true", "doNotPrompt", "true", "refreshKrb5Config", "true");
    javax.security.auth.login.Configuration jaas = new javax.security.auth.login.Configuration() {
      @Override
      public AppConfigurationEntry[] getAppConfigurationEntry(String appName) {
        return new AppConfigurationEntry[] {new AppConfigurationEntry(KerberosUtil.getKrb5LoginModuleName(),
            AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, options)};
      }
    };
    Subject subject = new Subject();
    new LoginContext("spnego-test", subject, null, jaas).login();
    return subject;
  }

  private record Cli(int status, String out) {}

  private static Cli cli(UserGroupInformation user, Map<String, String> env, String... args) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    PrivilegedExceptionAction<Integer> run = () -> new SpindleCli(out).run(args, env);
    int status = user == null ? run.run() : user.doAs(run);
    return new Cli(status, bytes.toString(StandardCharsets.UTF_8));
  }

  private static String site(Map<String, String> properties) {
    StringBuilder b = new StringBuilder("<configuration>\n");
    properties.forEach((k, v) -> b.append("  <property><name>").append(k).append("</name><value>").append(v)
        .append("</value></property>\n"));
    return b.append("</configuration>\n").toString();
  }

  private static String error(String body) throws IOException {
    JsonNode json = StatusJson.MAPPER.readTree(body);
    assertThat(json.has("error")).as(body).isTrue();
    return json.get("error").asText();
  }

  private static final HttpHandler METRICS = exchange -> {
    try (exchange) {
      HttpExchanges.send(exchange, 200, "text/plain", "spindle_up 1\n".getBytes(StandardCharsets.UTF_8));
    }
  };

  /** The scheduler as the handlers see it: no nodes, no applications; "admin" administers root. */
  private static final class FakeView implements SchedulerView {
    final AtomicInteger refreshes = new AtomicInteger();
    /** What the cordon operation was asked, {@code node: reason}; the SPNEGO tests only need it to be callable. */
    final List<String> cordons = new java.util.concurrent.CopyOnWriteArrayList<>();
    final List<String> askedAbout = Collections.synchronizedList(new ArrayList<>());

    @Override
    public EngineStatus status() {
      return EngineStatus.EMPTY;
    }

    @Override
    public SchedulerInfo info() {
      return new SchedulerInfo("rm1", true, 1, 1000, List.of());
    }

    @Override
    public Explanation explain(AppId appId) {
      throw new UnsupportedOperationException("not in this test");
    }

    @Override
    public List<AppHistory.Outcome> history(AppId appId) {
      return List.of();
    }

    @Override
    public Optional<String> containerName(long allocationId) {
      return Optional.empty();
    }

    @Override
    public boolean isQueueAdmin(String user, String queuePath) {
      askedAbout.add(user);
      return user.equals("admin");
    }

    @Override
    public String refreshQueues() {
      refreshes.incrementAndGet();
      return "queue configuration reloaded: 1 queues";
    }

    @Override
    public String cordonGpu(String node, int gpu, String reason) {
      cordons.add(node + "/" + gpu + ": " + reason);
      return "noted";
    }

    @Override
    public String cordon(String node, String reason) {
      cordons.add(node + ": " + reason);
      return "node " + node + (reason == null ? " takes new work again" : " takes no new work (" + reason + ")");
    }
  }
}
