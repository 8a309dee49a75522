package io.gma.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The architecture's rules, checked on the compiled classes of every module (this module depends on all of
 * them): docs/ARCHITECTURE.md draws the same picture.
 */
class ArchitectureTest {
    private static JavaClasses gma;

    @BeforeAll
    static void importClasses() {
        // test classes are left out, those of this module and those of the modules' test jars alike
        gma = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar")).importPackages("io.gma");
    }

    @Test
    void packagesHaveNoCycles() {
        slices().matching("io.gma.(**)").should().beFreeOfCycles().check(gma);
    }

    @Test
    void theClientApiShipsNoServer() {
        noClasses().that().resideInAnyPackage("io.gma.client..", "io.gma.registry.api..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gma.registry", "io.gma.pcservlet..",
                        "org.eclipse.jetty..", "jakarta.servlet..", "org.h2..", "net.sf.jsqlparser..",
                        "com.zaxxer.hikari..")
                .because("a plain Producer must not ship a web server or a database (issue 19)").check(gma);
    }

    @Test
    void onlyTheClientAndThePcServletUseTheInternals() {
        noClasses().that().resideOutsideOfPackages("io.gma.client..", "io.gma.pcservlet..", "io.gma.internal..")
                .should().dependOnClassesThat().resideInAPackage("io.gma.internal..")
                .because("io.gma.internal.link and io.gma.internal.spool (the PC servlet's spool, the client's"
                        + " outbox) are internal to them, not an API (docs/ARCHITECTURE.md)").check(gma);
    }

    @Test
    void theSpoolKnowsNothingOfItsOwners() {
        classes().that().resideInAPackage("io.gma.internal.spool..").should().onlyDependOnClassesThat()
                .resideInAnyPackage("io.gma.internal.spool..", "java..", "com.sun.nio.file..", "org.slf4j..")
                .because("the spool keeps records of bytes for the PC servlet and the client alike (and opens its"
                        + " files for direct I/O with the JDK's com.sun.nio.file.ExtendedOpenOption)").check(gma);
    }

    @Test
    void theClientAndThePcServletMeetOnlyOnTheWire() {
        noClasses().that().resideInAPackage("io.gma.pcservlet..").should().dependOnClassesThat()
                .resideInAPackage("io.gma.client..")
                .because("the uplink side of a PC servlet is the PC servlet's, on the link module, not the"
                        + " client's (issue 19)").check(gma);
    }

    @Test
    void wireDependsOnNothingOfOurs() {
        classes().that().resideInAPackage("io.gma.wire..").should().onlyDependOnClassesThat()
                .resideInAnyPackage("io.gma.wire..", "java..").check(gma);
    }
}
