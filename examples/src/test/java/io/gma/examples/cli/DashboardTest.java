package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard of a running demo, in a real headless browser (Debian's chromium and chromium-driver, which
 * .ci/run installs): the demo's endpoints appear, a query typed into the box returns rows, and a screenshot
 * is saved under target/. Served by the registry and by a PC servlet (whose queries it relays). With the secure
 * demo, the registry's dashboard asks for a token, says why a wrong one is refused, and shows the domains and the
 * charts with the right one until the person signs out. The demo's charts, its PC servlets' and its routes' picture
 * are drawn (issue 24).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DashboardTest {
    private static final String CHROMIUM = "/usr/bin/chromium";
    private static final String DRIVER = "/usr/bin/chromedriver";

    /** Headless chromium, or the test is skipped where it is not installed (and fails where CI needs it). */
    private static ChromeDriver chromium() {
        boolean browser = new File(CHROMIUM).canExecute() && new File(DRIVER).canExecute();
        if (System.getenv("GMA_REQUIRE_BROWSER") != null) { // CI: .ci/run installed them, so they must be there
            assertTrue(browser, CHROMIUM + " and " + DRIVER + " are missing");
        }
        assumeTrue(browser, "chromium and chromium-driver are not installed (.ci/run installs them)");
        // the secure demo's certificates come from a CA made for it, which the browser does not know
        ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM).addArguments("--headless=new",
                "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000", "--ignore-certificate-errors");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(DRIVER))
                .usingAnyFreePort().build();
        return new ChromeDriver(service, options);
    }

    private static void screenshot(ChromeDriver chrome, String name) throws Exception {
        Path shot = Path.of("target", name);
        Files.createDirectories(shot.getParent());
        Files.write(shot, chrome.getScreenshotAs(OutputType.BYTES));
        assertTrue(Files.size(shot) > 10_000, "the screenshot is " + Files.size(shot) + " bytes");
    }

    @Test
    void aRunningDemoShowsItsEndpointsAndAnswersAQuery() throws Exception {
        // a PC servlet that takes connections and never answers: the page must not wait for it
        try (Demo demo = Demo.start(Duration.ofMillis(500));
                java.net.ServerSocket hole = new java.net.ServerSocket(0, 50,
                        java.net.InetAddress.getLoopbackAddress())) {
            io.gma.registry.api.RegistryClient.create(demo.registryUrl()).registerDomain("hole",
                    "http://127.0.0.1:" + hole.getLocalPort(), null, Duration.ofMinutes(1));
            ChromeDriver chrome = chromium();
            try {
                for (String page : List.of(demo.dashboard(), demo.pcDashboard())) {
                    chrome.get(page);
                    WebDriverWait wait = new WebDriverWait(chrome, Duration.ofSeconds(30));
                    wait.until(b -> b.findElements(By.cssSelector("#endpoints tbody tr")).stream()
                            .anyMatch(r -> r.getText().matches("agent-[a-z2-7]{6}@bangor producer bangor .*")));
                    String endpoints = chrome.findElement(By.id("endpoints")).getText();
                    assertTrue(endpoints.contains("collector-") && endpoints.contains("@cardiff"), endpoints);
                    wait.until(b -> b.findElement(By.id("domains")).getText().contains("bangor (outbound-only)"
                            + " cardiff"));
                    wait.until(b -> b.findElement(By.id("domains")).getText().matches(
                            "(?s).*hole http://127\\.0\\.0\\.1:[0-9]+ no answer.*"));

                    WebElement sql = chrome.findElement(By.id("sql"));
                    sql.clear();
                    sql.sendKeys("SELECT name, domain FROM producers WHERE label = 'agent' ORDER BY name");
                    chrome.findElement(By.id("run")).click();
                    wait.until(b -> b.findElements(By.cssSelector("#result tbody tr")).size() == 2);
                    String result = chrome.findElement(By.cssSelector("#result tbody")).getText();
                    assertTrue(result.matches("(?s)(agent-[a-z2-7]{6}@(bangor bangor|cardiff cardiff)\n?){2}")
                            && result.contains("bangor bangor") && result.contains("cardiff cardiff"), result);
                    assertEquals("name domain", chrome.findElement(By.cssSelector("#result thead")).getText());
                    assertFalse(chrome.findElement(By.id("signin")).isDisplayed(), "nothing to sign in to");
                    assertFalse(chrome.findElement(By.id("signout")).isDisplayed());
                }
                screenshot(chrome, "dashboard.png");
            } finally {
                chrome.quit();
            }
        }
    }

    @Test
    void theSecureDemosDashboardAsksForATokenAndShowsTheDomainsOnceSignedIn(@TempDir Path temp) throws Exception {
        try (Demo demo = Demo.startSecure(Duration.ofMillis(500), temp.resolve("keys"))) {
            String token = Files.readString(demo.dashboardToken()).strip();
            ChromeDriver chrome = chromium();
            try {
                WebDriverWait wait = new WebDriverWait(chrome, Duration.ofSeconds(30));
                chrome.get(demo.dashboard());
                wait.until(b -> b.findElement(By.id("signin")).isDisplayed());
                wait.until(b -> b.findElement(By.id("signin-error")).getText().startsWith("no credentials"));
                assertEquals("not signed in", chrome.findElement(By.id("status")).getText());
                assertEquals("", chrome.findElement(By.cssSelector("#domains tbody")).getText());

                signIn(chrome, "gma2.not-a-token");
                wait.until(b -> b.findElement(By.id("signin-error")).getText().equals(
                        "not signed in: token refused: it is not a valid token of a trusted issuer"));
                assertTrue(chrome.findElement(By.id("signin")).isDisplayed());
                screenshot(chrome, "dashboard-sign-in.png");

                signIn(chrome, token);
                wait.until(b -> b.findElement(By.id("who")).getText().equals("signed in as operator"));
                assertFalse(chrome.findElement(By.id("signin")).isDisplayed());
                // the domains, and their PC servlets' status, which they let the registry's dashboard read
                wait.until(b -> b.findElement(By.id("domains")).getText().contains("bangor (outbound-only) cardiff"));
                wait.until(b -> b.findElement(By.id("domains")).getText().matches(
                        "(?s).*\ncardiff https://127\\.0\\.0\\.1:[0-9]+ [0-9]+ [0-9]+ [0-9]+ .*"));
                wait.until(b -> b.findElements(By.cssSelector("#endpoints tbody tr")).stream()
                        .anyMatch(r -> r.getText().matches("agent-[a-z2-7]{6}@bangor producer bangor .*")));
                WebElement sql = chrome.findElement(By.id("sql"));
                sql.clear();
                sql.sendKeys("SELECT name, domain FROM producers WHERE label = 'agent' ORDER BY name");
                chrome.findElement(By.id("run")).click();
                wait.until(b -> b.findElements(By.cssSelector("#result tbody tr")).size() == 2);
                screenshot(chrome, "dashboard-secure.png");
                // the token is kept by the registry alone: not in the page's reach, nor in its address
                assertEquals("0 0 ", chrome.executeScript("return localStorage.length + ' ' + sessionStorage.length"
                        + " + ' ' + document.cookie"));
                assertFalse(chrome.getCurrentUrl().contains(token), chrome.getCurrentUrl());
                assertEquals("", chrome.findElement(By.id("token")).getAttribute("value"));

                // the charts: the session reads the registry, the archiver's HTTPS listener lets its dashboard read
                chrome.get(demo.charts());
                wait.until(b -> points(b) > 0);
                chrome.get(demo.dashboard());
                wait.until(b -> b.findElement(By.id("who")).getText().equals("signed in as operator"));

                chrome.findElement(By.id("signout")).click();
                wait.until(b -> b.findElement(By.id("signin")).isDisplayed());
                assertEquals("signed out", chrome.findElement(By.id("signin-error")).getText());
                assertEquals("", chrome.findElement(By.cssSelector("#endpoints tbody")).getText());
                chrome.navigate().refresh();
                wait.until(b -> b.findElement(By.id("signin")).isDisplayed());

                // swansea's dashboard has no sign-in: its relay is off with security on, and it says so
                chrome.get(demo.pcDashboard());
                wait.until(b -> b.findElement(By.id("status")).getText().contains("the registry relay is off"));
                assertFalse(chrome.findElement(By.id("signin")).isDisplayed());
            } finally {
                chrome.quit();
            }
        }
    }

    /**
     * The demo's charts (issue 24): host_cpu's page draws a uPlot line per CPU of each agent's host, fed by the
     * demo's archiver, whose points grow as rows come live; the range switch reads the period again; the PC
     * servlets' page charts the registry's samples of each reachable one; and the overview draws the three domains
     * with bangor relayed by cardiff. A screenshot of each page is kept under target/.
     */
    @Test
    void theDemosChartsMoveAndTheRoutesPictureNamesItsDomains() throws Exception {
        try (Demo demo = Demo.start(Duration.ofMillis(500))) {
            ChromeDriver chrome = chromium();
            try {
                WebDriverWait wait = new WebDriverWait(chrome, Duration.ofSeconds(30));
                chrome.get(demo.charts());
                wait.until(b -> b.findElements(By.cssSelector("#chart .uplot canvas")).size() == 1
                        && points(b) > 0);
                assertEquals("5m", chrome.findElement(By.id("chart")).getAttribute("data-range"));
                assertEquals(300, span(chrome), 2, "the x axis spans the last 5 minutes");
                String legend = chrome.findElement(By.cssSelector("#chart .u-legend")).getText();
                assertTrue(legend.matches("(?s).*(cardiff|bangor) / \\S+ / -1.*"), legend); // domain / host / cpu
                long before = points(chrome);
                wait.until(b -> points(b) >= before + 2); // live rows, every 500 ms per CPU
                screenshot(chrome, "dashboard-table.png");

                chrome.findElement(By.cssSelector("#ranges button[data-range='1h']")).click();
                wait.until(b -> "1h".equals(b.findElement(By.id("chart")).getAttribute("data-range")));
                assertEquals(3600, span(chrome), 2, "the x axis spans the last hour");
                assertTrue(chrome.getCurrentUrl().contains("range=1h"), chrome.getCurrentUrl());
                wait.until(b -> points(b) > 0);
                screenshot(chrome, "dashboard-table-hour.png");

                chrome.get(demo.dashboard() + "pcs.html");
                for (String domain : List.of("cardiff", "swansea")) {
                    By chart = By.cssSelector(".pc[data-domain='" + domain + "']");
                    wait.until(b -> !b.findElements(chart).isEmpty() && Integer.parseInt(b.findElement(chart)
                            .getAttribute("data-points")) >= 3);
                    assertEquals(1, chrome.findElement(chart).findElements(By.cssSelector(".uplot canvas")).size());
                    String series = chrome.findElement(chart).findElement(By.cssSelector(".u-legend")).getText();
                    assertTrue(series.contains("in /s") && series.contains("out /s") && series.contains("queued"),
                            series);
                }
                assertTrue(chrome.findElements(By.cssSelector(".pc[data-domain='bangor']")).isEmpty(),
                        "bangor is outbound-only: nothing reaches its PC servlet");
                screenshot(chrome, "dashboard-pcs.png");

                chrome.get(demo.dashboard());
                wait.until(b -> b.findElements(By.cssSelector("#routes svg g.domain")).size() == 3);
                for (String domain : List.of("bangor", "cardiff", "swansea")) {
                    assertTrue(chrome.findElement(By.cssSelector("#routes g.domain[data-domain='" + domain + "']"))
                            .getText().startsWith(domain), domain);
                }
                assertEquals(1, chrome.findElements(By.cssSelector(
                        "#routes line.relay[data-from='bangor'][data-to='cardiff']")).size());
                assertEquals(1, chrome.findElements(By.cssSelector("#routes path.post")).size(), "cardiff and"
                        + " swansea post to each other");
                wait.until(b -> b.findElements(By.cssSelector("#routes g.domain.up")).size() == 2);
                screenshot(chrome, "dashboard-routes.png");
            } finally {
                chrome.quit();
            }
        }
    }

    /** The points the table's chart draws now. */
    private static long points(WebDriver chrome) {
        String n = chrome.findElement(By.id("chart")).getAttribute("data-points");
        return n == null ? 0 : Long.parseLong(n);
    }

    /** The seconds the chart's x axis spans. */
    private static double span(ChromeDriver chrome) {
        return ((Number) chrome.executeScript("return gmaChart.scales.x.max - gmaChart.scales.x.min;"))
                .doubleValue();
    }

    private static void signIn(WebDriver chrome, String token) {
        WebElement field = chrome.findElement(By.id("token"));
        field.clear();
        field.sendKeys(token);
        chrome.findElement(By.id("signin-button")).click();
    }
}
