// Package config loads settings for the inventory service.
package config

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Settings controls the behaviour of the inventory service.
type Settings struct {
	MaxItems int
	Currency string
}

// ParseConfig reads a key=value config file, falling back to defaults.
func ParseConfig(path string) Settings {
	settings := Settings{MaxItems: 100, Currency: "USD"}
	file, err := os.Open(path)
	if err != nil {
		return settings
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), "=")
		if !ok {
			continue
		}
		settings.apply(strings.TrimSpace(key), strings.TrimSpace(value))
	}
	return settings
}

// apply sets a single setting from its textual key and value.
func (s *Settings) apply(key, value string) {
	switch key {
	case "max_items":
		if n, err := strconv.Atoi(value); err == nil {
			s.MaxItems = n
		}
	case "currency":
		s.Currency = value
	}
}

// Clamp restricts value to the closed interval [low, high].
func Clamp(value, low, high float64) float64 {
	if value < low {
		return low
	}
	if value > high {
		return high
	}
	return value
}
