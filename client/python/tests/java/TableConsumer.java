import io.gma.client.Consumer;
import io.gma.client.ContinuousQuery;
import io.gma.client.TableRow;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * A Java consumer of monitoring tables, for the Python client's tests: run as a single-file source program on
 * the examples jar's class path. It starts the continuous query given, prints "query started", then a line
 * "row PRODUCER ROW" for each row; each line "latest SQL" on stdin prints "latest N" and a line a row, and
 * "historyfrom PRODUCER SQL" prints "history N" and a line a row of what that producer answers since the epoch.
 *
 * <pre>java -cp examples/target/gma-examples.jar TableConsumer.java REGISTRY_URL DOMAIN SQL</pre>
 */
public class TableConsumer {
    public static void main(String[] args) throws Exception {
        try (Consumer c = Consumer.builder().registry(args[0]).domain(args[1]).label("tables-consumer").build();
                ContinuousQuery q = c.continuous(args[2], row -> print("row " + row.producer() + " " + row.row()))) {
            print("query started");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null;) {
                if (line.startsWith("historyfrom ")) {
                    // historyfrom PRODUCER SQL: what that producer answers of the history since the epoch
                    String[] f = line.split(" ", 3);
                    try {
                        var h = c.historyFrom(f[1], f[2], java.time.Instant.EPOCH);
                        StringBuilder b = new StringBuilder("history " + h.rows().size());
                        for (TableRow r : h.rows()) {
                            b.append("\n").append(r.producer()).append(" ").append(r.row());
                        }
                        print(b.toString());
                    } catch (Exception e) {
                        print("failed " + e.getMessage());
                    }
                } else if (line.startsWith("latest ")) {
                    try {
                        var rows = c.latest(line.substring("latest ".length()));
                        StringBuilder b = new StringBuilder("latest " + rows.size());
                        for (TableRow r : rows) {
                            b.append("\n").append(r.producer()).append(" ").append(r.row());
                        }
                        print(b.toString());
                    } catch (Exception e) {
                        print("failed " + e.getMessage());
                    }
                }
            }
        } catch (Exception e) {
            print("failed " + e.getMessage());
        }
    }

    private static synchronized void print(String s) {
        System.out.println(s);
        System.out.flush();
    }
}
