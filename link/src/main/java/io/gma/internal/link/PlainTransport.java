package io.gma.internal.link;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** The socket as it is: bytes go straight between the link's buffers and the kernel, with no copy between. */
final class PlainTransport extends Transport {
    PlainTransport(SocketChannel channel) {
        super(channel);
    }

    @Override
    int read(ByteBuffer dst) throws IOException {
        return channel.read(dst);
    }

    @Override
    int write(ByteBuffer src) throws IOException {
        return channel.write(src);
    }
}
