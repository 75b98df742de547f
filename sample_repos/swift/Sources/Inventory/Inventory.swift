import Foundation
import InventoryConfig

/// Anything that can report a monetary value.
public protocol Valued {
    /// Return the total value in the base currency.
    func totalValue() -> Double
}

/// A single stock-keeping unit with a price and a quantity.
public struct Item: Equatable {
    public let name: String
    public let price: Double
    public var quantity: Int

    /// Return the total value of this item line.
    public func value() -> Double {
        return price * Double(quantity)
    }
}

/// An in-memory collection of items keyed by name.
public final class Inventory {
    private var items: [String: Item] = [:]
    private let maxItems: Int

    /// Summary statistics for an inventory snapshot.
    public struct Stats {
        public let count: Int
        public let value: Double
    }

    /// Create an empty inventory holding at most `maxItems` entries.
    public init(maxItems: Int = 100) {
        self.maxItems = maxItems
    }

    /// Add an item, replacing any existing item with the same name.
    public func addItem(_ item: Item) throws {
        guard items.count < maxItems else {
            throw InventoryError.full
        }
        items[item.name] = item
    }

    /// Remove and return the item with the given name.
    @discardableResult
    public func removeItem(named name: String) -> Item? {
        return items.removeValue(forKey: name)
    }

    /// Return a Stats snapshot for this inventory.
    public func stats() -> Stats {
        return Stats(count: items.count, value: totalValue())
    }
}

/// Errors raised by inventory operations.
public enum InventoryError: Error {
    case full
}

extension Inventory: Valued {
    /// Return the summed value of every item.
    public func totalValue() -> Double {
        return items.values.reduce(0) { $0 + $1.value() }
    }
}

/// Return the retry delay for an attempt using capped exponential growth.
public func computeBackoff(attempt: Int) -> Double {
    let delay = 0.5 * pow(2.0, Double(attempt))
    return clamp(delay, low: 0, high: 30)
}

/// Build an inventory from config and print its total value.
func run() throws {
    let settings = parseConfig(path: "inventory.json")
    let inventory = Inventory(maxItems: settings.maxItems)
    try inventory.addItem(Item(name: "widget", price: 2.5, quantity: 4))
    try inventory.addItem(Item(name: "gadget", price: 10, quantity: 1))
    inventory.removeItem(named: "widget")
    print(inventory.totalValue(), computeBackoff(attempt: 3))
}
