--- Inventory service: stores items and computes their total value.
-- @module inventory

local math = require("math")
local config = require("config")

--- A single stock-keeping unit with a price and a quantity.
-- @type Item
local Item = {}
Item.__index = Item

--- Create a new item.
-- @param name string
-- @param price number
-- @param quantity number
function Item.new(name, price, quantity)
  return setmetatable({ name = name, price = price, quantity = quantity or 1 }, Item)
end

--- Return the total value of this item line.
function Item:value()
  return self.price * self.quantity
end

--- An in-memory collection of items keyed by name.
-- @type Inventory
local Inventory = {}
Inventory.__index = Inventory

--- Create an empty inventory holding at most max_items entries.
function Inventory.new(max_items)
  return setmetatable({ items = {}, count = 0, max_items = max_items or 100 }, Inventory)
end

--- Add an item, replacing any existing item with the same name.
function Inventory:add_item(item)
  if self.count >= self.max_items then
    error("inventory is full")
  end
  if self.items[item.name] == nil then
    self.count = self.count + 1
  end
  self.items[item.name] = item
end

--- Remove and return the item with the given name.
function Inventory:remove_item(name)
  local item = self.items[name]
  if item ~= nil then
    self.items[name] = nil
    self.count = self.count - 1
  end
  return item
end

--- Return the summed value of every item.
function Inventory:total_value()
  local function line_value(item)
    return item:value()
  end
  local total = 0
  for _, item in pairs(self.items) do
    total = total + line_value(item)
  end
  return total
end

--- Return the retry delay for an attempt using capped exponential growth.
-- @param attempt number
local function compute_backoff(attempt)
  local delay = 0.5 * math.pow(2, attempt)
  return config.clamp(delay, 0, 30)
end

--- Build an inventory from config and print its total value.
local function main()
  local settings = config.parse_config("inventory.conf")
  local inventory = Inventory.new(settings.max_items)
  inventory:add_item(Item.new("widget", 2.5, 4))
  inventory:add_item(Item.new("gadget", 10))
  inventory:remove_item("widget")
  print(inventory:total_value(), compute_backoff(3))
end

return { Item = Item, Inventory = Inventory, compute_backoff = compute_backoff, main = main }
