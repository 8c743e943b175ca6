package io.spindle.yarn;

import io.spindle.core.model.AppId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;

/**
 * The one place where YARN's ids become the engine's and back. The engine's ids are YARN's text forms
 * ({@code application_<cluster>_<n>}, {@code host:port}), so journals and saved state read the same under either.
 */
final class YarnIds {

  private YarnIds() {}

  static AppId app(ApplicationId id) {
    return AppId.of(id.toString());
  }

  static ApplicationId application(AppId id) {
    return ApplicationId.fromString(id.value());
  }

  static io.spindle.core.model.NodeId node(NodeId id) {
    return io.spindle.core.model.NodeId.of(id.toString());
  }

  static NodeId yarnNode(io.spindle.core.model.NodeId id) {
    return NodeId.fromString(id.value());
  }
}
