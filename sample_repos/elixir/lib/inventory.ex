defmodule Inventory do
  @moduledoc """
  Inventory service: stores items and computes their total value.
  """

  require Logger
  alias Inventory.Config
  import Inventory.Config, only: [clamp: 3]

  defmodule Item do
    @moduledoc """
    A single stock-keeping unit with a price and a quantity.
    """
    defstruct name: nil, price: 0.0, quantity: 1

    @doc "Return the total value of this item line."
    def value(%Item{price: price, quantity: quantity}), do: price * quantity
  end

  defstruct items: %{}, max_items: 100

  @doc "Create an empty inventory holding at most `max_items` entries."
  def new(max_items \\ 100), do: %Inventory{max_items: max_items}

  @doc "Add an item, replacing any existing item with the same name."
  def add_item(%Inventory{items: items, max_items: max} = inventory, %Item{} = item) do
    if map_size(items) >= max do
      {:error, :full}
    else
      {:ok, %Inventory{inventory | items: Map.put(items, item.name, item)}}
    end
  end

  @doc "Remove the item with the given name, returning it and the new inventory."
  def remove_item(%Inventory{items: items} = inventory, name) do
    {item, rest} = Map.pop(items, name)
    {item, %Inventory{inventory | items: rest}}
  end

  @doc "Return the summed value of every item."
  def total_value(%Inventory{items: items}) do
    items
    |> Map.values()
    |> Enum.map(&line_value/1)
    |> Enum.sum()
  end

  defp line_value(item), do: Item.value(item)

  @doc "Return the retry delay for an attempt using capped exponential growth."
  def compute_backoff(attempt) do
    delay = 0.5 * :math.pow(2, attempt)
    clamp(delay, 0.0, 30.0)
  end

  @doc "Build an inventory from config and log its total value."
  def main do
    settings = Config.parse_config("inventory.exs")
    inventory = new(settings.max_items)
    {:ok, inventory} = add_item(inventory, %Item{name: "widget", price: 2.5, quantity: 4})
    {:ok, inventory} = add_item(inventory, %Item{name: "gadget", price: 10.0})
    {_removed, inventory} = remove_item(inventory, "widget")
    Logger.info("total=#{total_value(inventory)} backoff=#{compute_backoff(3)}")
  end
end
