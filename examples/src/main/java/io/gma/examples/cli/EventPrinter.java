package io.gma.examples.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gma.client.Incoming;
import io.gma.client.MessageHandler;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Base64;

/**
 * How {@code tail} and {@code sub} print what arrives: a line per line of text, raw data, or one JSON object a
 * message. Whole messages at a time, so that the lines of two producers never interleave.
 */
final class EventPrinter implements MessageHandler {
    /** The three shapes. */
    enum Format {
        /** {@code 12:00:00.123 NAME: text}, one line per line of the message's text. */
        LINES,
        /**
         * The message's text as it is, with a line end after each that lacks one; bytes that are not UTF-8 as
         * {@code base64:} and their Base64.
         */
        RAW,
        /**
         * {@code {"time": ISO-8601, "from": NAME, "data": TEXT}}; {@code "base64"} instead of {@code "data"} for
         * bytes that are not UTF-8.
         */
        JSON
    }

    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** Always with its milliseconds: LocalTime's own text leaves out a fraction of zero. */
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    private final PrintWriter out;
    private final Format format;

    EventPrinter(PrintWriter out, Format format) {
        this.out = out;
        this.format = format;
    }

    @Override
    public void onMessage(Incoming m) throws Exception {
        String printed = shape(format, Instant.now(), m.from(), m.data());
        synchronized (out) {
            out.print(printed);
            out.flush();
        }
    }

    /** What a message from {@code from} that arrived {@code at} prints as, in {@code format}. */
    static String shape(Format format, Instant at, String from, byte[] data) throws JsonProcessingException {
        String text = utf8(data);
        if (format == Format.JSON) {
            ObjectNode line = MAPPER.createObjectNode().put("time", at.toString()).put("from", from);
            if (text != null) {
                line.put("data", text);
            } else {
                line.put("base64", Base64.getEncoder().encodeToString(data));
            }
            return MAPPER.writeValueAsString(line) + "\n";
        }
        if (format == Format.RAW) {
            return raw(data);
        }
        StringBuilder b = new StringBuilder();
        String prefix = TIME.format(LocalTime.ofInstant(at, ZoneId.systemDefault())) + " " + from + ": ";
        String body = text != null ? text.strip() : "(" + data.length + " bytes, not UTF-8)";
        for (String line : body.split("\n", -1)) {
            b.append(prefix).append(line).append('\n');
        }
        return b.toString();
    }

    /** {@link Format#RAW}'s shape of {@code data}. */
    static String raw(byte[] data) {
        String text = utf8(data);
        String raw = text != null ? text : "base64:" + Base64.getEncoder().encodeToString(data);
        return raw.endsWith("\n") ? raw : raw + "\n";
    }

    /** The bytes as text, or null when they are not UTF-8. */
    static String utf8(byte[] data) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(data)).toString();
        } catch (CharacterCodingException notText) {
            return null;
        }
    }
}
