package io.gma.archiver;

/**
 * An archiver that cannot start, or a table it cannot archive: a database it cannot open or that holds another
 * table of the same name, the registry or the endpoints failing. The sentence names the value and why.
 */
public class ArchiveException extends Exception {
    private static final long serialVersionUID = 1L;

    public ArchiveException(String message) {
        super(message);
    }

    public ArchiveException(String message, Throwable cause) {
        super(message, cause);
    }
}
