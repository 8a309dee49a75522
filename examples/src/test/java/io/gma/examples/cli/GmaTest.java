package io.gma.examples.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The gma command: the demo runs, shows both agents with their routes, and answers the gma select it prints; usage
 * errors exit 2.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GmaTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int gma(String... args) {
        return Gma.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    @Test
    void theDemoShowsBothAgentsWithTheirRoutesAnswersTheSelectItPrintsAndStops() throws Exception {
        LiveGma demo = new LiveGma("demo", "--duration", "40", "--interval", "300");
        demo.awaitOut("\nAsk the agents' tables");
        demo.awaitOut("FROM host_cpu\"\n"); // the line's end: its command may be written after its start
        String shown = demo.out.toString();
        assertTrue(shown.matches("(?s)GMA demo, all in this process on loopback\\. Dashboard:"
                + " http://127\\.0\\.0\\.1:[0-9]+/dashboard/\n.*"), shown);
        String asked = shown.substring(shown.indexOf("Ask the agents' tables"));
        String select = asked.substring(asked.indexOf("./gma "), asked.indexOf('\n'));
        assertTrue(select.matches("\\./gma select --registry http://127\\.0\\.0\\.1:[0-9]+ --domain swansea --pc"
                + " 127\\.0\\.0\\.1:[0-9]+ \"SELECT host, cpu, busy, load1 FROM host_cpu\""), select);
        // pasted as it is: rows of both agents, bangor's relayed by cardiff's PC servlet
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            GmaCommandsTest.Run rows = GmaCommandsTest.gma(args(select));
            assertEquals(0, rows.status(), rows.err());
            assertTrue(rows.out().matches("(?s)host +cpu +busy +load1 +producer +inserted\n.*"
                    + "\n\\S+/bangor +-1 +[0-9.]+ .* agent-[a-z2-7]{6}@bangor .*"
                    + "\n\\S+/cardiff +-1 +[0-9.]+ .* agent-[a-z2-7]{6}@cardiff .*"), rows.out());
        });
        demo.awaitOut("@bangor ");
        await().atMost(Duration.ofSeconds(30)).until(() -> demo.out.toString().matches("(?s).*"
                + "agent-[a-z2-7]{6}@cardiff +\\S+/cardiff +memory +used [0-9.]+% of .*via pc@cardiff > pc@swansea\n.*")
                && demo.out.toString().matches("(?s).*agent-[a-z2-7]{6}@bangor +\\S+/bangor +cpu +busy [0-9.]+% .*"
                + " s  via pc@bangor > pc@cardiff > pc@swansea\n.*"));
        assertEquals(0, demo.interrupt(), demo.err.toString());
        long threads = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("gma-")
                && t.isAlive() && !t.getName().startsWith("gma-demo")).count();
        assertTrue(threads < 5, threads + " gma threads still running after the demo stopped");
    }

    /** A command line as a shell splits it, without its {@code ./gma}: words, and one "quoted" argument. */
    static String[] args(String commandLine) {
        int quote = commandLine.indexOf('"');
        List<String> args = new ArrayList<>(List.of(commandLine.substring(0, quote).trim().split(" +")));
        args.remove("./gma");
        args.add(commandLine.substring(quote + 1, commandLine.lastIndexOf('"')));
        return args.toArray(new String[0]);
    }

    @Test
    void usageErrorsExitTwoWithOneLine() {
        assertEquals(2, gma("demo", "--interval", "5"));
        assertEquals("--interval 5 is outside 100..60000 ms (see gma demo --help)\n", err.toString());
        err.getBuffer().setLength(0);
        assertEquals(2, gma("frobnicate"));
        assertEquals("Unmatched argument at index 0: 'frobnicate' (see gma --help)\n", err.toString());
        err.getBuffer().setLength(0);
        assertEquals(2, gma());
        assertEquals("give a command (see gma --help)\n", err.toString());
        assertEquals(0, gma("demo", "--help"));
        assertTrue(out.toString().contains("Usage: gma demo"), out.toString());
    }

    @Test
    void theHelpListsTheBenchmarkSuiteWithTheCommands() {
        assertEquals(0, gma("--help"));
        String help = out.toString();
        assertTrue(help.contains("\n  top, status  Live rates and queues of PC servlets and endpoints.\n"
                + "  keys         Makes signing keys, the trust file, test certificates; rotates\n"
                + "                 keys.\n"
                + "  bench        Runs the benchmark suite (from the ./gma launcher; gma bench --help).\n"), help);
    }

    @Test
    void helpWithOrWithoutACommandShowsItsUsage() {
        assertEquals(0, gma("help"), err.toString());
        assertTrue(out.toString().startsWith("Usage: gma "), out.toString());
        out.getBuffer().setLength(0);
        assertEquals(0, gma("help", "ping"), err.toString());
        assertTrue(out.toString().contains("\nUsage: gma ping "), out.toString());
    }

    @Test
    void clientCommandsShowOnlyClientOptionsAndServersTheirsToo() {
        for (String client : new String[] {"query", "select", "ping", "tail", "pub", "sub", "request", "top", "pong",
            "agent"}) {
            out.getBuffer().setLength(0);
            assertEquals(0, gma(client, "--help"), err.toString());
            String help = out.toString();
            assertTrue(help.contains("--security=DIR") && help.contains("--identity=NAME"), client + ": " + help);
            for (String serverOnly : new String[] {"--insecure", "--rules", "--client-auth"}) {
                assertTrue(!help.contains(serverOnly), client + " shows " + serverOnly + ": " + help);
            }
        }
        for (String server : new String[] {"registry", "pc"}) {
            out.getBuffer().setLength(0);
            assertEquals(0, gma(server, "--help"), err.toString());
            for (String option : new String[] {"--security=DIR", "--identity=NAME", "--insecure", "--rules=FILE",
                "--client-auth="}) {
                assertTrue(out.toString().contains(option), server + " lacks " + option + ": " + out);
            }
        }
    }
}
