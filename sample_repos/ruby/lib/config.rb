# Configuration loading helpers for the inventory service.

require "yaml"

module InventoryService
  # Loads settings and provides small numeric helpers.
  module Config
    DEFAULTS = { "max_items" => 100, "currency" => "USD" }.freeze

    # Parse a YAML config file, falling back to defaults.
    def self.parse_config(path)
      return DEFAULTS.dup unless File.exist?(path)

      DEFAULTS.merge(normalize(YAML.safe_load(File.read(path)) || {}))
    end

    # Stringify keys so lookups are consistent.
    def self.normalize(raw)
      raw.each_with_object({}) do |(key, value), out|
        out[key.to_s] = value
      end
    end

    # Restrict value to the closed interval [low, high].
    def self.clamp(value, low, high)
      value.clamp(low, high)
    end

    private_class_method :normalize
  end
end
