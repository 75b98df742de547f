//! Inventory service: stores items and computes their total value.

const std = @import("std");
const config = @import("config.zig");

/// A single stock-keeping unit with a price and a quantity.
pub const Item = struct {
    name: []const u8,
    price: f64,
    quantity: u32 = 1,

    /// Return the total value of this item line.
    pub fn value(self: Item) f64 {
        return self.price * @as(f64, @floatFromInt(self.quantity));
    }
};

/// An in-memory collection of items keyed by name.
pub const Inventory = struct {
    items: std.StringHashMap(Item),
    max_items: usize,

    /// Summary statistics for an inventory snapshot.
    pub const Stats = struct {
        count: usize,
        value: f64,
    };

    /// Create an empty inventory holding at most max_items entries.
    pub fn init(allocator: std.mem.Allocator, max_items: usize) Inventory {
        return .{ .items = std.StringHashMap(Item).init(allocator), .max_items = max_items };
    }

    /// Release the memory owned by the inventory.
    pub fn deinit(self: *Inventory) void {
        self.items.deinit();
    }

    /// Add an item, replacing any existing item with the same name.
    pub fn addItem(self: *Inventory, item: Item) !void {
        if (self.items.count() >= self.max_items) return error.InventoryFull;
        try self.items.put(item.name, item);
    }

    /// Remove the item with the given name; returns true if it existed.
    pub fn removeItem(self: *Inventory, name: []const u8) bool {
        return self.items.remove(name);
    }

    /// Return the summed value of every item.
    pub fn totalValue(self: *const Inventory) f64 {
        var total: f64 = 0;
        var it = self.items.valueIterator();
        while (it.next()) |item| {
            total += item.value();
        }
        return total;
    }

    /// Return a Stats snapshot for this inventory.
    pub fn stats(self: *const Inventory) Stats {
        return .{ .count = self.items.count(), .value = self.totalValue() };
    }
};

/// Return the retry delay for an attempt using capped exponential growth.
pub fn computeBackoff(attempt: u32) f64 {
    const delay = 0.5 * std.math.pow(f64, 2.0, @floatFromInt(attempt));
    return config.clamp(delay, 0.0, 30.0);
}

pub fn main() !void {
    var gpa = std.heap.GeneralPurposeAllocator(.{}){};
    defer _ = gpa.deinit();
    const settings = config.parseConfig("max_items = 50\ncurrency = EUR\n");
    var inventory = Inventory.init(gpa.allocator(), settings.max_items);
    defer inventory.deinit();
    try inventory.addItem(.{ .name = "widget", .price = 2.5, .quantity = 4 });
    try inventory.addItem(.{ .name = "gadget", .price = 10.0 });
    _ = inventory.removeItem("widget");
    std.debug.print("{d} {d}\n", .{ inventory.totalValue(), computeBackoff(3) });
}
