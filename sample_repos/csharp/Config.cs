using System;
using System.IO;

namespace Inventory.Configuration
{
    /// <summary>Settings that control the inventory service.</summary>
    public readonly struct Settings
    {
        public int MaxItems { get; init; }
        public string Currency { get; init; }
    }

    /// <summary>Configuration loading helpers for the inventory service.</summary>
    public static class ConfigParser
    {
        /// <summary>Parse a key=value config file, falling back to defaults.</summary>
        public static Settings ParseConfig(string path)
        {
            int maxItems = 100;
            string currency = "USD";
            if (!File.Exists(path))
            {
                return new Settings { MaxItems = maxItems, Currency = currency };
            }
            foreach (var line in File.ReadAllLines(path))
            {
                var parts = line.Split('=', 2);
                if (parts.Length != 2)
                {
                    continue;
                }
                switch (parts[0].Trim())
                {
                    case "max_items":
                        maxItems = int.Parse(parts[1]);
                        break;
                    case "currency":
                        currency = parts[1].Trim();
                        break;
                }
            }
            return new Settings { MaxItems = maxItems, Currency = currency };
        }

        /// <summary>Restrict value to the closed interval [low, high].</summary>
        public static double Clamp(double value, double low, double high)
        {
            return Math.Max(low, Math.Min(value, high));
        }
    }
}
