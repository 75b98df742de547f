namespace Example
{
    public class Base
    {
        public virtual void Close()
        {
        }
    }
}
