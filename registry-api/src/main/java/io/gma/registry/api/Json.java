package io.gma.registry.api;

import com.fasterxml.jackson.databind.ObjectMapper;

/** The JSON mapper of {@link RegistryClient}: writes its requests and reads the registry's answers. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }
}
