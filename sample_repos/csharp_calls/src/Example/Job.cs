namespace Example
{
    public class Job : IRunner
    {
        public void Run()
        {
        }
    }
}
