package io.gma.pcservlet;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gma.internal.link.LinkCounters;
import io.gma.internal.spool.SpoolStats;
import io.gma.wire.PrometheusText;
import java.util.Map;
import java.util.TreeMap;

/** {@code GET /gma/v1/status} (JSON) and {@code GET /metrics} (Prometheus text format 0.0.4). */
final class StatusPages {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_SQL_BYTES = 64 * 1024;

    private StatusPages() {
    }

    /**
     * An SQL query from the dashboard, relayed to the registry under this PC servlet's identity; its answer in
     * the registry's own JSON. Only while security is off: {@link TunnelServlet} refuses the call before.
     */
    static Answer registryQuery(PcNode node, java.io.InputStream body) throws java.io.IOException {
        byte[] sql = body.readNBytes(MAX_SQL_BYTES + 1);
        if (sql.length > MAX_SQL_BYTES) {
            return json(413, JSON.createObjectNode().put("error", "TOO_LARGE").put("message", "a query of more"
                    + " than " + MAX_SQL_BYTES + " bytes"));
        }
        try {
            io.gma.registry.api.QueryResult r = node.registry().query(new String(sql,
                    java.nio.charset.StandardCharsets.UTF_8));
            ObjectNode root = JSON.createObjectNode();
            ArrayNode columns = root.putArray("columns");
            r.columns().forEach(columns::add);
            ArrayNode rows = root.putArray("rows");
            r.rows().forEach(row -> rows.add(JSON.valueToTree(row)));
            root.put("truncated", r.truncated());
            return json(200, root);
        } catch (io.gma.registry.api.RegistryException e) {
            return json(e.status() == 0 ? 502 : e.status(), JSON.createObjectNode().put("error", e.code())
                    .put("message", e.getMessage()));
        }
    }

    private static Answer json(int status, ObjectNode body) throws java.io.IOException {
        return new Answer(status, "application/json", JSON.writeValueAsBytes(body), 0, null);
    }

    static byte[] status(PcNode node) throws java.io.IOException {
        ObjectNode root = JSON.createObjectNode();
        root.put("domain", node.domain()).put("version", Tunnel.VERSION).put("url", node.url())
                .put("via", node.settings().via()).put("uplink", hostPort(node.uplinks()))
                .put("stopping", node.isStopping());
        ArrayNode clients = root.putArray("clients");
        for (LocalQueues.QueueInfo q : node.local().queues()) {
            clients.addObject().put("name", q.endpoint()).put("connected", q.connected())
                    .put("queuedMessages", q.messages()).put("queuedBytes", q.bytes());
        }
        queues(root.putArray("outbound"), node.outbound().queues());
        queues(root.putArray("relayed"), node.relay().queues());
        Metrics m = node.metrics();
        ObjectNode counters = root.putObject("counters").put("batchesSent", m.batchesSent.sum())
                .put("messagesSent", m.messagesSent.sum())
                .put("batchesReceived", m.batchesReceived.sum()).put("messagesReceived", m.messagesReceived.sum())
                .put("throttledSent", m.throttledSent.sum()).put("throttledReceived", m.throttledReceived.sum())
                .put("retries", m.retries.sum()).put("refused", m.refused.sum())
                .put("unsendable", m.unsendable.sum()).put("drops", m.drops.sum())
                .put("delivered", m.delivered.sum()).put("relayed", m.relayed.sum())
                .put("wireBytesSent", m.wireBytesSent.sum()).put("plainBytesSent", m.plainBytesSent.sum())
                .put("wireBytesReceived", m.wireBytesReceived.sum())
                .put("plainBytesReceived", m.plainBytesReceived.sum())
                .put("compressedBatchesSent", m.compressedSent.sum())
                .put("compressedBatchesReceived", m.compressedReceived.sum())
                .put("uncompressedBatchesSent", m.uncompressedSent.sum());
        LinkCounters uplinks = node.uplinks().counters();
        // what this domain's endpoints sent it and what it wrote to them: with messagesReceived and messagesSent,
        // every message in and out of this PC servlet (the registry's dashboard charts them per second)
        counters.put("uplinkMessagesIn", uplinks.messagesIn()).put("uplinkMessagesOut", uplinks.messagesOut());
        ObjectNode uplinkRefused = counters.putObject("uplinkRefused");
        uplinkRefusals(uplinks).forEach((reason, n) -> uplinkRefused.put(camelCase(reason), n));
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root);
    }

    /**
     * Uplink connections refused before they authenticated, by reason: the {@code reason} label of
     * {@code gma_pc_uplink_refused_total}, and in camelCase the keys of the status page's
     * {@code counters.uplinkRefused}.
     */
    static Map<String, Long> uplinkRefusals(LinkCounters s) {
        Map<String, Long> byReason = new java.util.LinkedHashMap<>();
        byReason.put("over_cap", s.connectionsOverCap());
        byReason.put("unauthorized", s.handshakesUnauthorized());
        byReason.put("too_large", s.handshakesTooLarge());
        byReason.put("malformed", s.handshakesMalformed());
        byReason.put("timeout", s.handshakesTimedOut());
        return byReason;
    }

    /** {@code too_large} as {@code tooLarge}. */
    private static String camelCase(String snake) {
        int i = snake.indexOf('_');
        return i < 0 ? snake : snake.substring(0, i) + Character.toUpperCase(snake.charAt(i + 1))
                + camelCase(snake.substring(i + 2));
    }

    private static void queues(ArrayNode out, Map<String, DomainQueue> queues) {
        for (DomainQueue q : new TreeMap<>(queues).values()) {
            out.addObject().put("domain", q.domain).put("queuedMessages", q.messages()).put("queuedBytes", q.bytes());
        }
    }

    private static String hostPort(UplinkServer g) {
        return g.address().getHostString() + ":" + g.address().getPort();
    }

    /** A counter with a {@code direction} label, sent and received. */
    private static void byDirection(StringBuilder out, String name, String help, long sent, long received) {
        PrometheusText.metric(out, name, "counter", help);
        PrometheusText.sample(out, name, PrometheusText.label("direction", "sent"), sent);
        PrometheusText.sample(out, name, PrometheusText.label("direction", "received"), received);
    }

    static String metrics(PcNode node) {
        StringBuilder out = new StringBuilder(4096);
        domainGauges(out, "gma_pc_outbound_queue", "queued for each destination domain", node.outbound().queues());
        domainGauges(out, "gma_pc_relay_queue", "queued for each outbound-only domain that polls this one",
                node.relay().queues());
        PrometheusText.metric(out, "gma_pc_endpoint_queue_bytes", "gauge",
                "Bytes queued for each endpoint of this domain");
        for (LocalQueues.QueueInfo q : node.local().queues()) {
            PrometheusText.sample(out, "gma_pc_endpoint_queue_bytes", PrometheusText.label("endpoint", q.endpoint()),
                    q.bytes());
        }
        PrometheusText.metric(out, "gma_pc_endpoint_queue_messages", "gauge", "Messages queued for each endpoint");
        for (LocalQueues.QueueInfo q : node.local().queues()) {
            PrometheusText.sample(out, "gma_pc_endpoint_queue_messages",
                    PrometheusText.label("endpoint", q.endpoint()), q.messages());
        }
        Metrics m = node.metrics();
        counter(out, "gma_pc_batches_sent_total", "Batches posted to other domains and answered 200", m.batchesSent
                .sum());
        counter(out, "gma_pc_messages_sent_total", "Messages in those batches", m.messagesSent.sum());
        counter(out, "gma_pc_batches_received_total", "Batches accepted from other domains", m.batchesReceived.sum());
        counter(out, "gma_pc_messages_received_total", "Messages in those batches", m.messagesReceived.sum());
        counter(out, "gma_pc_throttled_sent_total", "POSTs answered 429 here", m.throttledSent.sum());
        counter(out, "gma_pc_throttled_received_total", "POSTs other domains answered 429 or 503",
                m.throttledReceived.sum());
        counter(out, "gma_pc_retries_total", "POSTs retried after a failure", m.retries.sum());
        counter(out, "gma_pc_out_of_turn_total", "POSTs answered 409 here: a batch before them was refused for now, or"
                + " their turn did not come", m.outOfTurn.sum());
        counter(out, "gma_pc_went_back_total", "Refusals or failures of a POST of this PC servlet that sent the"
                + " batches in flight after it back to their queue", m.wentBack.sum());
        counter(out, "gma_pc_refused_total", "Batches another domain refused for good (400, 401, 403, 413, 415)",
                m.refused.sum());
        counter(out, "gma_pc_unsendable_total", "Batches this PC servlet did not send, its own setting at fault: a"
                + " plaintext URL under security, or a URL it cannot parse", m.unsendable.sum());
        counter(out, "gma_pc_drops_total", "Messages that could not be delivered", m.drops.sum());
        counter(out, "gma_pc_delivered_total", "Messages queued for this domain's endpoints", m.delivered.sum());
        counter(out, "gma_pc_relayed_total", "Messages relayed for outbound-only domains", m.relayed.sum());
        byDirection(out, "gma_pc_tunnel_wire_bytes_total", "Bytes of batch bodies on the HTTP tunnel as they went on"
                + " the wire, compressed or not: sent (POSTs, answers to polls) and received (POSTs, polled batches)",
                m.wireBytesSent.sum(), m.wireBytesReceived.sum());
        byDirection(out, "gma_pc_tunnel_plain_bytes_total", "The same bodies before compression (after"
                + " decompression)", m.plainBytesSent.sum(), m.plainBytesReceived.sum());
        byDirection(out, "gma_pc_compressed_batches_total", "Batch bodies that went compressed (zstd)",
                m.compressedSent.sum(), m.compressedReceived.sum());
        PrometheusText.counter(out, "gma_pc_compress_seconds_total", "Time spent compressing batches to send, and"
                + " judging those that went plain", null, m.compressNanos.sum() / 1e9);
        counter(out, "gma_pc_uncompressed_batches_sent_total", "Batches sent plain to a peer that reads zstd: too"
                + " small, compressing did not pay, or not tried after batches that did not pay", m.uncompressedSent
                .sum());
        LinkCounters uplinks = node.uplinks().counters();
        counter(out, "gma_pc_uplink_messages_in_total", "Messages read from uplinks", uplinks.messagesIn());
        counter(out, "gma_pc_uplink_messages_out_total", "Messages written to uplinks", uplinks.messagesOut());
        PrometheusText.metric(out, "gma_pc_uplink_refused_total", "counter", "Uplink connections refused before they"
                + " authenticated: over_cap (closed at once, too many pending in the process or from the address),"
                + " unauthorized (credentials, rules, TLS), too_large (over 4096 bytes of data in the handshake),"
                + " malformed, timeout (handshake not over within 5 s)");
        uplinkRefusals(uplinks).forEach((reason, n) -> PrometheusText.sample(out, "gma_pc_uplink_refused_total",
                PrometheusText.label("reason", reason), n));
        counter(out, "gma_pc_uplinks_over_limit_total", "Uplinks refused with ERROR QUEUE_FULL at HELLO because"
                + " --max-links were open", uplinks.linksOverLimit());
        m.histogram(out, "gma_pc_post_seconds", "Round trip of each POST to another domain");
        SpoolStats spool = node.spooling().stats();
        if (spool != null) {
            PrometheusText.metric(out, "gma_pc_spool_records", "gauge", "Messages in the spool, not acknowledged by the"
                    + " next hop yet");
            PrometheusText.sample(out, "gma_pc_spool_records", null, spool.liveRecords());
            PrometheusText.metric(out, "gma_pc_spool_bytes", "gauge", "The spool's files on disk, in bytes");
            PrometheusText.sample(out, "gma_pc_spool_bytes", null, spool.diskBytes());
            counter(out, "gma_pc_spool_appended_total", "Messages appended to the spool", spool.appended());
            counter(out, "gma_pc_spool_fsyncs_total", "Forces of the spool's files to disk", spool.forces());
            counter(out, "gma_pc_spool_written_bytes_total", "Bytes written to the spool's files: records and"
                    + " acknowledgements, with their framing", spool.written());
            counter(out, "gma_pc_spool_recovered_total", "Messages read back from the spool at start",
                    spool.recovered());
            counter(out, "gma_pc_spool_damaged_total", "Damaged runs of bytes (torn or corrupt records, told by"
                    + " their CRC32C) skipped in the spool's files at start", spool.damaged());
            counter(out, "gma_pc_spool_torn_total", "Records cut short at the end of the last data file (as a"
                    + " crash in mid-write leaves them, never acknowledged), cut off at start", spool.torn());
            counter(out, "gma_pc_spool_full_total", "Messages held back because the spool or its disk was"
                    + " full, and writes its disk refused (one every 100 ms while it stays full)",
                    spool.refusedFull());
            counter(out, "gma_pc_spool_expired_total", "Messages read back older than maxAge and sent back to"
                    + " their senders as ERROR TIMEOUT", m.expired.sum());
        }
        return out.toString();
    }

    private static void domainGauges(StringBuilder out, String name, String help, Map<String, DomainQueue> queues) {
        Map<String, DomainQueue> sorted = new TreeMap<>(queues);
        PrometheusText.metric(out, name + "_bytes", "gauge", "Bytes " + help);
        sorted.forEach((d, q) -> PrometheusText.sample(out, name + "_bytes", PrometheusText.label("domain", d),
                q.bytes()));
        PrometheusText.metric(out, name + "_messages", "gauge", "Messages " + help);
        sorted.forEach((d, q) -> PrometheusText.sample(out, name + "_messages", PrometheusText.label("domain", d),
                q.messages()));
    }

    private static void counter(StringBuilder out, String name, String help, double value) {
        PrometheusText.counter(out, name, help, null, value);
    }
}
