/**
 * The stream protocol between two GMA processes (protocol.md section 4, docs/protocol.md), as the client's
 * endpoints and the PC servlet's uplink side both speak it: a {@link io.gma.internal.link.Link} (TLS, HELLO and
 * WELCOME, ACKs, keepalive, BYE), the event loops that serve many links each
 * ({@link io.gma.internal.link.IoThreads}), its writer, the {@link io.gma.internal.link.SendQueue} that outlives
 * links, the {@link io.gma.internal.link.Peer} that holds them, the accept loop with its caps on connections not
 * yet authenticated, and back-off.
 *
 * <p><b>Internal to gma-client and gma-pcservlet: not an API.</b> Nothing here is for applications, and any of
 * it may change in any release without notice. Applications use {@code io.gma.client}. The package is public
 * only because Java has no other way to share it between two modules on the class path (as OkHttp's
 * {@code okhttp3.internal}); docs/ARCHITECTURE.md says why this is a package convention rather than a JPMS
 * module that exports it to those two only.
 */
package io.gma.internal.link;
