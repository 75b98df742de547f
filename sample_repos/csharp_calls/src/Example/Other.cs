namespace Example
{
    public class Other
    {
        public string Get(string key)
        {
            return key;
        }
    }
}
