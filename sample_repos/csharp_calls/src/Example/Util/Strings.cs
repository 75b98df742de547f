using System.Collections.Generic;

namespace Example.Util
{
    public static class Strings
    {
        public static string Upper(string text)
        {
            return text;
        }

        public static string Shout(this string text)
        {
            return text;
        }

        public static List<T> AsList<T>(this IEnumerable<T> source)
        {
            return new List<T>(source);
        }
    }
}
