//! Configuration loading helpers for the inventory service.

use std::fs;

/// Settings that control the inventory service.
#[derive(Debug, Clone)]
pub struct Settings {
    pub max_items: usize,
    pub currency: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { max_items: 100, currency: "USD".to_string() }
    }
}

/// Parse a `key = value` config file, falling back to defaults.
pub fn parse_config(path: &str) -> Settings {
    let mut settings = Settings::default();
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(_) => return settings,
    };
    for line in text.lines() {
        if let Some((key, value)) = parsing::split_line(line) {
            match key {
                "max_items" => settings.max_items = value.parse().unwrap_or(100),
                "currency" => settings.currency = value.to_string(),
                _ => {}
            }
        }
    }
    settings
}

/// Restrict `value` to the closed interval `[low, high]`.
pub fn clamp(value: f64, low: f64, high: f64) -> f64 {
    value.max(low).min(high)
}

/// Low-level line parsing helpers.
mod parsing {
    /// Split one config line into a trimmed key and value.
    pub fn split_line(line: &str) -> Option<(&str, &str)> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let (key, value) = line.split_once('=')?;
        Some((key.trim(), value.trim()))
    }
}
