<?php

declare(strict_types=1);

namespace App\Inventory\Config;

use function parse_ini_file;

/**
 * Configuration loading helpers for the inventory service.
 */
final class ConfigParser
{
    /** Default settings used when a key is missing. */
    private const DEFAULTS = ['max_items' => 100, 'currency' => 'USD'];

    /**
     * Parse an INI config file, falling back to defaults.
     *
     * @return array<string, mixed>
     */
    public static function parseConfig(string $path): array
    {
        if (!is_file($path)) {
            return self::DEFAULTS;
        }
        $raw = parse_ini_file($path) ?: [];
        return array_merge(self::DEFAULTS, self::normalize($raw));
    }

    /**
     * Convert numeric strings to integers.
     *
     * @param array<string, string> $raw
     * @return array<string, mixed>
     */
    private static function normalize(array $raw): array
    {
        return array_map(
            fn (string $value) => is_numeric($value) ? (int) $value : $value,
            $raw,
        );
    }

    /** Restrict value to the closed interval [low, high]. */
    public static function clamp(float $value, float $low, float $high): float
    {
        return max($low, min($value, $high));
    }
}
