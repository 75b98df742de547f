//! Configuration loading helpers for the inventory service.

const std = @import("std");

/// Settings that control the inventory service.
pub const Settings = struct {
    max_items: usize = 100,
    currency: []const u8 = "USD",
};

/// Parse a key=value config document, falling back to defaults.
pub fn parseConfig(text: []const u8) Settings {
    var settings = Settings{};
    var lines = std.mem.tokenizeScalar(u8, text, '\n');
    while (lines.next()) |line| {
        const eq = std.mem.indexOfScalar(u8, line, '=') orelse continue;
        const key = trim(line[0..eq]);
        const value = trim(line[eq + 1 ..]);
        if (std.mem.eql(u8, key, "max_items")) {
            settings.max_items = std.fmt.parseInt(usize, value, 10) catch settings.max_items;
        } else if (std.mem.eql(u8, key, "currency")) {
            settings.currency = value;
        }
    }
    return settings;
}

/// Strip spaces and tabs from both ends of a slice.
fn trim(s: []const u8) []const u8 {
    return std.mem.trim(u8, s, " \t\r");
}

/// Restrict value to the closed interval [low, high].
pub fn clamp(value: f64, low: f64, high: f64) f64 {
    return @max(low, @min(value, high));
}

test "clamp caps values" {
    try std.testing.expectEqual(@as(f64, 30.0), clamp(100.0, 0.0, 30.0));
}
