package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CommandTest {
    private static List<Command> all() {
        List<Command> all = new ArrayList<>();
        for (int code = 0; code <= 0xFF; code++) {
            Command c = Command.lookup(code);
            if (c != null) {
                all.add(c);
            }
        }
        return all;
    }

    @Test
    void controlIsReplyErrorAndUnsubscribeOnly() {
        assertEquals(List.of(Command.REPLY, Command.ERROR, Command.UNSUBSCRIBE),
                all().stream().filter(Command::isControl).toList());
    }

    @Test
    void streamOnlyIsTheConnectionsOwnCommands() {
        assertEquals(List.of(Command.HELLO, Command.WELCOME, Command.PING, Command.PONG, Command.ACK, Command.BYE),
                all().stream().filter(Command::isStreamOnly).toList());
    }

    @Test
    void applicationCommandsAreNeitherControlNorStreamOnly() {
        for (Command c : all()) {
            if (c.isApplication()) {
                assertFalse(c.isControl(), c.name());
                assertFalse(c.isStreamOnly(), c.name());
            }
        }
    }
}
