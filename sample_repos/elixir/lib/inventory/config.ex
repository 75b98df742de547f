defmodule Inventory.Config do
  @moduledoc """
  Configuration loading helpers for the inventory service.
  """

  @defaults %{max_items: 100, currency: "USD"}

  @doc """
  Parse a `key=value` config file, falling back to defaults.
  """
  def parse_config(path) do
    case File.read(path) do
      {:ok, contents} ->
        contents
        |> String.split("\n", trim: true)
        |> Enum.reduce(@defaults, &apply_line/2)

      {:error, _reason} ->
        @defaults
    end
  end

  defp apply_line(line, settings) do
    case String.split(line, "=", parts: 2) do
      [key, value] -> Map.put(settings, String.to_atom(String.trim(key)), coerce(value))
      _ -> settings
    end
  end

  defp coerce(value) do
    value = String.trim(value)

    case Integer.parse(value) do
      {number, ""} -> number
      _ -> value
    end
  end

  @doc "Restrict `value` to the closed interval `[low, high]`."
  def clamp(value, low, high), do: value |> max(low) |> min(high)
end
