package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * is saved under target/. Served by the registry and by a PC servlet (whose queries it relays).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DashboardTest {
    private static final String CHROMIUM = "/usr/bin/chromium";
    private static final String DRIVER = "/usr/bin/chromedriver";

    @Test
    void aRunningDemoShowsItsEndpointsAndAnswersAQuery() throws Exception {
        boolean browser = new File(CHROMIUM).canExecute() && new File(DRIVER).canExecute();
        if (System.getenv("GMA_REQUIRE_BROWSER") != null) { // CI: .ci/run installed them, so they must be there
            assertTrue(browser, CHROMIUM + " and " + DRIVER + " are missing");
        }
        assumeTrue(browser, "chromium and chromium-driver are not installed (.ci/run installs them)");
        ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM).addArguments("--headless=new",
                "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(DRIVER))
                .usingAnyFreePort().build();
        // a PC servlet that takes connections and never answers: the page must not wait for it
        try (Demo demo = Demo.start(Duration.ofMillis(500));
                java.net.ServerSocket hole = new java.net.ServerSocket(0, 50,
                        java.net.InetAddress.getLoopbackAddress())) {
            io.gma.registry.api.RegistryClient.create(demo.registryUrl()).registerDomain("hole",
                    "http://127.0.0.1:" + hole.getLocalPort(), null, Duration.ofMinutes(1));
            WebDriver chrome = new ChromeDriver(service, options);
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
                    sql.sendKeys("SELECT name, domain FROM producers ORDER BY name");
                    chrome.findElement(By.id("run")).click();
                    wait.until(b -> b.findElements(By.cssSelector("#result tbody tr")).size() == 2);
                    String result = chrome.findElement(By.cssSelector("#result tbody")).getText();
                    assertTrue(result.matches("(?s)(agent-[a-z2-7]{6}@(bangor bangor|cardiff cardiff)\n?){2}")
                            && result.contains("bangor bangor") && result.contains("cardiff cardiff"), result);
                    assertEquals("name domain", chrome.findElement(By.cssSelector("#result thead")).getText());
                }
                Path shot = Path.of("target", "dashboard.png");
                Files.createDirectories(shot.getParent());
                Files.write(shot, ((ChromeDriver) chrome).getScreenshotAs(OutputType.BYTES));
                assertTrue(Files.size(shot) > 10_000, "the screenshot is " + Files.size(shot) + " bytes");
            } finally {
                chrome.quit();
            }
        }
    }
}
