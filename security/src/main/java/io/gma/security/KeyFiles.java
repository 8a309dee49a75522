package io.gma.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Files that hold secrets (private keys, token secrets, store passwords): written readable by their owner
 * only, from the first byte, and refused when others may read them.
 */
public final class KeyFiles {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private KeyFiles() {
    }

    /**
     * Writes a new file readable and writable by its owner only (on a file system with POSIX permissions); it
     * never exists with wider permissions, not even for a moment.
     *
     * @throws FileAlreadyExistsException if it exists: a secret is never overwritten by accident
     */
    public static Path writeNew(Path file, String text) throws IOException {
        Files.write(create(file), text.getBytes(StandardCharsets.UTF_8));
        return file;
    }

    /**
     * Replaces a file's text, owner-only, through a temporary file and an atomic move, so that a reader sees
     * the old text or the new one, never half of either.
     */
    public static Path replace(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".new");
        Files.deleteIfExists(tmp);
        writeNew(tmp, text);
        try {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (java.nio.file.AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
        return file;
    }

    private static Path create(Path file) throws IOException {
        if (Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new FileAlreadyExistsException(file + " exists already: not overwritten");
        }
        try {
            FileAttribute<Set<PosixFilePermission>> owner = PosixFilePermissions.asFileAttribute(OWNER_ONLY);
            return Files.createFile(file, owner);
        } catch (UnsupportedOperationException notPosix) {
            return Files.createFile(file); // a file system without POSIX permissions: its own defaults apply
        }
    }

    /** Makes an existing file owner-only (files that another tool wrote, keytool's key stores). */
    public static void restrict(Path file) throws IOException {
        try {
            Files.setPosixFilePermissions(file, OWNER_ONLY);
        } catch (UnsupportedOperationException notPosix) {
            // a file system without POSIX permissions: its own defaults apply
        }
    }

    /**
     * Refuses a secret file that every user of the machine may read.
     *
     * @throws IOException a sentence naming the file and how to fix it
     */
    public static void checkPrivate(Path file) throws IOException {
        Set<PosixFilePermission> p;
        try {
            p = Files.getPosixFilePermissions(file);
        } catch (UnsupportedOperationException notPosix) {
            return;
        }
        if (p.contains(PosixFilePermission.OTHERS_READ) || p.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IOException(file + " holds a secret and is readable by every user of this machine ("
                    + PosixFilePermissions.toString(p) + "): make it private with chmod 600 " + file);
        }
    }
}
