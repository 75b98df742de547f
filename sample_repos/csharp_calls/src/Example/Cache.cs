using System;
using System.Collections.Generic;
using Example.Util;

namespace Example
{
    public class Cache : Base
    {
        private readonly Store store = new Store();
        private readonly Dictionary<string, string> map = new Dictionary<string, string>();

        public IRunner Runner { get; set; }

        public string Read(string key, Other other)
        {
            map.Remove(key);
            this.Refresh(key);
            store.Get(key);
            other.Get(key);
            var fresh = new Store();
            fresh.Put(key);
            Runner.Run();
            Strings.Upper(key);
            key.Shout();
            IEnumerable<string> keys = map.Keys;
            keys.AsList();
            Console.WriteLine(key);
            Apply(Refresh);
            base.Close();
            return key;
        }

        public bool Remove(string key)
        {
            return true;
        }

        public void Apply(Action<string> action)
        {
        }

        void Refresh(string key)
        {
        }

        public override void Close()
        {
        }
    }
}
