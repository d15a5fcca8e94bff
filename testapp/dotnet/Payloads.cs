namespace TestApp;

/// <summary>The model of the paper's JSON and XML scenarios (its Listings 2 and 3).</summary>
/// <remarks>Plain .NET types only, so a notebook can reference TestApp.dll and use it.</remarks>
public class SimpleClass
{
    public Guid Id { get; set; }
    public string StringValue { get; set; } = "";
    public int IntValue { get; set; }
    public List<int> ListOfInts { get; set; } = new();
}

/// <summary>The payloads of the scenarios, fresh values on every call.</summary>
public static class Payloads
{
    /// <summary>The text scenario: the Latin alphabet, lower then upper case, then the digits.</summary>
    public const string Text = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    /// <summary>The HTML scenario's shape: 100 buttons, 10 select lists of 10 options each.</summary>
    public const int Buttons = 100;
    public const int Selects = 10;
    public const int OptionsPerSelect = 10;

    public const int ListLength = 10;

    public static SimpleClass NewSimpleClass()
    {
        var id = Guid.NewGuid();
        var list = new List<int>(ListLength);
        for (var i = 0; i < ListLength; i++)
        {
            list.Add(Random.Shared.Next());
        }
        return new SimpleClass
        {
            Id = id,
            StringValue = id.ToString()[..8],
            IntValue = Random.Shared.Next(),
            ListOfInts = list,
        };
    }
}

/// <summary>The item of the Web API self-host article's /api/testapi list.</summary>
public class Foo
{
    public int Id { get; set; }
    public string Name { get; set; } = "";
    public DateTime CreatedOn { get; set; }
}
