namespace Example
{
    public class Store
    {
        public string Get(string key)
        {
            return key;
        }

        public void Put(string key)
        {
        }
    }
}
