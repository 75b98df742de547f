namespace Example
{
    public interface IRunner
    {
        void Run();
    }
}
