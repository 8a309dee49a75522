import io.gma.client.Producer;
import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * A Java producer of the monitoring table host_cpu, for the Python client's tests: run as a single-file source
 * program on the examples jar's class path. It declares the table with a predicate (site = SITE), prints its name,
 * then inserts a row for each line "host load1" on stdin and prints "inserted" after each.
 *
 * <pre>java -cp examples/target/gma-examples.jar TableProducer.java REGISTRY_URL DOMAIN SITE</pre>
 */
public class TableProducer {
    public static void main(String[] args) throws Exception {
        try (Producer p = Producer.builder().registry(args[0]).domain(args[1]).label("tables-" + args[2]).build()) {
            p.declare(TableSchema.builder("host_cpu").column("site", ColumnType.STRING)
                    .column("host", ColumnType.STRING).column("load1", ColumnType.DOUBLE)
                    .column("up", ColumnType.BOOLEAN).primaryKey("host").predicate("site = '" + args[2] + "'")
                    .build());
            System.out.println("producer is " + p.name());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null;) {
                String[] f = line.trim().split(" ");
                p.insert("host_cpu", Row.of(args[2], f[0], Double.parseDouble(f[1]), true));
                System.out.println("inserted " + f[0]);
                System.out.flush();
            }
        }
    }
}
