import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * DynamoDB Local bound to 127.0.0.1. Its jar has no bind option: ServerRunner
 * builds a Jetty `new Server(port)`, whose connector listens on every
 * interface. We build the same server with DynamoDB Local's own parser, set
 * the host on its connector before start, and skip the telemetry call of its
 * main(). Run by the Java source launcher (`java -cp DynamoDBLocal.jar this.java`),
 * so nothing is compiled or stored ahead of time (tools/stack/services.ts).
 */
public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    String host = System.getProperty("dynamodb.host", "127.0.0.1");
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) {
      if (!(connector instanceof ServerConnector)) throw new IllegalStateException("unexpected connector " + connector);
      ((ServerConnector) connector).setHost(host);
    }
    proxy.start();
    System.out.println("DynamoDB Local listening on " + host + ":" + ((ServerConnector) server.getConnectors()[0]).getLocalPort());
  }
}
