package com.example.inventory.config

import java.io.File
import java.util.Properties

/**
 * Settings that control the inventory service.
 */
data class Settings(val maxItems: Int = 100, val currency: String = "USD")

/**
 * Parse a properties config file, falling back to defaults.
 */
fun parseConfig(path: String): Settings {
    val file = File(path)
    if (!file.exists()) {
        return Settings()
    }
    val props = Properties()
    file.inputStream().use { props.load(it) }
    return Settings(
        maxItems = props.getProperty("max_items")?.toIntOrNull() ?: 100,
        currency = props.getProperty("currency") ?: "USD",
    )
}

/**
 * Restrict [value] to the closed interval [[low], [high]].
 */
fun clamp(value: Double, low: Double, high: Double): Double =
    value.coerceIn(low, high)

/**
 * Holds the most recently loaded settings.
 */
object ConfigCache {
    private var cached: Settings? = null

    /** Return cached settings, loading them on first use. */
    fun get(path: String): Settings {
        return cached ?: parseConfig(path).also { cached = it }
    }
}
