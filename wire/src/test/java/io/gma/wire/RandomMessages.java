package io.gma.wire;

import java.nio.charset.StandardCharsets;
import java.util.Random;

/** Random messages for round-trip and fuzz tests: names of 0..255 UTF-8 bytes mixing 1- to 4-byte characters. */
final class RandomMessages {
    private static final int[] CODE_POINTS = {'a', 'Z', '7', '-', '@', '.', 0xE9, 0x3B1, 0x20AC, 0x6C34, 0x1F600};

    private final Random random;

    RandomMessages(Random random) {
        this.random = random;
    }

    /** A name of at most {@code maxBytes} UTF-8 bytes, possibly empty. */
    String name(int maxBytes) {
        int target = random.nextInt(maxBytes + 1);
        StringBuilder name = new StringBuilder();
        int bytes = 0;
        while (true) {
            int cp = CODE_POINTS[random.nextInt(CODE_POINTS.length)];
            int n = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
            if (bytes + n > target) {
                return name.toString();
            }
            name.appendCodePoint(cp);
            bytes += n;
        }
    }

    /** Data of 0..maxBytes, most of it small: a quarter of the sizes are spread up to the maximum. */
    byte[] data(int maxBytes) {
        int size = random.nextInt(4) == 0 ? random.nextInt(maxBytes + 1) : random.nextInt(Math.min(maxBytes, 2048) + 1);
        byte[] data = new byte[size];
        random.nextBytes(data);
        return data;
    }

    Message message(int maxDataBytes) {
        Command command = Command.lookup(random.nextInt(256));
        while (command == null || command == Command.ACK) {
            command = Command.lookup(random.nextInt(256));
        }
        String from = name(255);
        String to = command == Command.HELLO ? "" : name(255);
        if (command.requiresNames()) {
            from = from.isEmpty() ? "f" : from;
            to = to.isEmpty() ? "t" : to;
        }
        return Message.of(command, from, to, random.nextLong(), data(maxDataBytes));
    }
}
