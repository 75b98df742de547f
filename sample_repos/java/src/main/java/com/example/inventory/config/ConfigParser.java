package com.example.inventory.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Configuration loading helpers for the inventory service.
 */
public final class ConfigParser {

    private ConfigParser() {
    }

    /**
     * Parse a properties file, falling back to defaults.
     *
     * @param path location of the properties file
     * @return settings keyed by name
     */
    public static Map<String, String> parseConfig(String path) {
        Map<String, String> settings = defaults();
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            props.load(in);
        } catch (IOException e) {
            return settings;
        }
        for (String key : props.stringPropertyNames()) {
            settings.put(key, props.getProperty(key).trim());
        }
        return settings;
    }

    /** Return the default settings. */
    private static Map<String, String> defaults() {
        Map<String, String> settings = new HashMap<>();
        settings.put("max_items", "100");
        settings.put("currency", "USD");
        return settings;
    }

    /** Restrict value to the closed interval [low, high]. */
    public static double clamp(double value, double low, double high) {
        return Math.max(low, Math.min(value, high));
    }
}
