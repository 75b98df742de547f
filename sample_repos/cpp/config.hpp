/**
 * Configuration loading helpers for the inventory service.
 */
#pragma once

#include <algorithm>
#include <fstream>
#include <map>
#include <string>

namespace inventory {
namespace config {

/// Settings that control the inventory service.
struct Settings {
    std::size_t max_items = 100;
    std::string currency = "USD";
};

/// Restrict value to the closed interval [low, high].
inline double clamp(double value, double low, double high) {
    return std::max(low, std::min(value, high));
}

/// Parse a key=value config file, falling back to defaults.
inline Settings parse_config(const std::string& path) {
    Settings settings;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        auto eq = line.find('=');
        if (eq == std::string::npos) {
            continue;
        }
        std::string key = line.substr(0, eq);
        std::string value = line.substr(eq + 1);
        if (key == "max_items") {
            settings.max_items = std::stoul(value);
        } else if (key == "currency") {
            settings.currency = value;
        }
    }
    return settings;
}

}  // namespace config
}  // namespace inventory
