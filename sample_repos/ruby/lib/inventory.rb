# Inventory service: stores items and computes their total value.

require "json"
require_relative "config"

module InventoryService
  # A single stock-keeping unit with a price and a quantity.
  Item = Struct.new(:name, :price, :quantity) do
    # Return the total value of this item line.
    def value
      price * quantity
    end
  end

  # An in-memory collection of items keyed by name.
  class Inventory
    # Summary statistics for an inventory snapshot.
    class Stats
      attr_reader :count, :value

      def initialize(count, value)
        @count = count
        @value = value
      end
    end

    attr_reader :max_items

    # Create an empty inventory holding at most max_items entries.
    def initialize(max_items = 100)
      @items = {}
      @max_items = max_items
    end

    # Add an item, replacing any existing item with the same name.
    def add_item(item)
      raise ArgumentError, "inventory is full" if @items.size >= max_items

      @items[item.name] = item
    end

    # Remove and return the item with the given name.
    def remove_item(name)
      @items.delete(name)
    end

    # Return the summed value of every item.
    def total_value
      @items.values.sum(&:value)
    end

    # Return a Stats snapshot for this inventory.
    def stats
      Stats.new(@items.size, total_value)
    end

    # Serialize the inventory to a JSON string.
    def to_json(*_args)
      JSON.generate(@items.values.map(&:to_h))
    end
  end

  # Return the retry delay for an attempt using capped exponential growth.
  def self.compute_backoff(attempt, base: 0.5, cap: 30.0)
    delay = base * (2**attempt)
    Config.clamp(delay, 0.0, cap)
  end

  # Build an inventory from config and print its total value.
  def self.main
    settings = Config.parse_config("inventory.yml")
    inventory = Inventory.new(settings.fetch("max_items"))
    inventory.add_item(Item.new("widget", 2.5, 4))
    inventory.add_item(Item.new("gadget", 10.0, 1))
    inventory.remove_item("widget")
    puts inventory.total_value
    puts compute_backoff(3)
  end
end

InventoryService.main if $PROGRAM_NAME == __FILE__
