// Package main runs the inventory service.
package main

import (
	"fmt"
	"math"

	"example.com/inventory/config"
)

// Item is a single stock-keeping unit with a price and a quantity.
type Item struct {
	Name     string
	Price    float64
	Quantity int
}

// Valuer is implemented by anything that can report a monetary value.
type Valuer interface {
	TotalValue() float64
}

// Inventory is an in-memory collection of items keyed by name.
type Inventory struct {
	items    map[string]Item
	maxItems int
}

// NewInventory creates an empty inventory holding at most maxItems entries.
func NewInventory(maxItems int) *Inventory {
	return &Inventory{items: make(map[string]Item), maxItems: maxItems}
}

// AddItem adds an item, replacing any existing item with the same name.
func (inv *Inventory) AddItem(item Item) error {
	if len(inv.items) >= inv.maxItems {
		return fmt.Errorf("inventory is full")
	}
	inv.items[item.Name] = item
	return nil
}

// RemoveItem removes and returns the item with the given name.
func (inv *Inventory) RemoveItem(name string) (Item, bool) {
	item, ok := inv.items[name]
	delete(inv.items, name)
	return item, ok
}

// TotalValue returns the summed value of every item.
func (inv *Inventory) TotalValue() float64 {
	lineValue := func(item Item) float64 {
		return item.Price * float64(item.Quantity)
	}
	total := 0.0
	for _, item := range inv.items {
		total += lineValue(item)
	}
	return total
}

// ComputeBackoff returns the retry delay for an attempt using capped exponential growth.
func ComputeBackoff(attempt int) float64 {
	delay := 0.5 * math.Pow(2, float64(attempt))
	return config.Clamp(delay, 0, 30)
}

func main() {
	settings := config.ParseConfig("inventory.conf")
	inv := NewInventory(settings.MaxItems)
	inv.AddItem(Item{Name: "widget", Price: 2.5, Quantity: 4})
	inv.AddItem(Item{Name: "gadget", Price: 10, Quantity: 1})
	inv.RemoveItem("widget")
	var v Valuer = inv
	fmt.Println(v.TotalValue(), ComputeBackoff(3))
}
