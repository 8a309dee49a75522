package io.gma.internal.link;

import io.gma.wire.Message;

/** A link listener for tests that does nothing but take every message. */
abstract class QuietListener implements LinkListener {
    @Override
    public String helloCredential() {
        return null;
    }

    @Override
    public Refusal refusal(Message hello, String identity) {
        return null;
    }

    @Override
    public void linkOpened(Link link) {
    }

    @Override
    public void linkWorked(Link link) {
    }

    @Override
    public boolean receive(Message m, Link link) {
        return true;
    }

    @Override
    public void saidBye(Link link) {
    }

    @Override
    public void linkClosed(Link link, LinkException why) {
    }
}
