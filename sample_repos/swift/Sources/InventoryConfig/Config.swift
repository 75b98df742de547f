import Foundation

/// Settings that control the inventory service.
public struct Settings: Codable {
    public var maxItems: Int = 100
    public var currency: String = "USD"

    public init() {}
}

/// Parse a JSON config file, falling back to defaults.
public func parseConfig(path: String) -> Settings {
    guard let data = FileManager.default.contents(atPath: path) else {
        return Settings()
    }
    return (try? JSONDecoder().decode(Settings.self, from: data)) ?? Settings()
}

/// Restrict `value` to the closed interval `[low, high]`.
public func clamp(_ value: Double, low: Double, high: Double) -> Double {
    return max(low, min(value, high))
}

extension Settings {
    /// Return true when the currency code looks valid.
    public var hasValidCurrency: Bool {
        return currency.count == 3 && currency == currency.uppercased()
    }

    /// Return a copy with a different item limit.
    public func withMaxItems(_ limit: Int) -> Settings {
        var copy = self
        copy.maxItems = limit
        return copy
    }
}
