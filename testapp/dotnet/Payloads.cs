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

/// <summary>One line of the /templates page's list.</summary>
public class MenuItem
{
    public int Id { get; set; }
    public string Name { get; set; } = "";
    public decimal Price { get; set; }
}

/// <summary>
/// The model of the /templates page (Go vs .NET Core 2017, its templates test): a title, a
/// message and a list of items, rendered through a layout. The Go servers (testapp/go,
/// cmd/goserver/page.go) render the same data into the same markup.
/// </summary>
public class TemplatePage
{
    public string Title { get; set; } = "";
    public string Message { get; set; } = "";
    public IReadOnlyList<MenuItem> Items { get; set; } = [];

    /// <summary>The page's data, shared by every request (rendered each time).</summary>
    public static readonly TemplatePage Menu = new()
    {
        Title = "Menu",
        Message = "The menu of the day: 16 items from a data model, rendered through a layout.",
        Items =
        [
            new() { Id = 1, Name = "Espresso", Price = 2.20m },
            new() { Id = 2, Name = "Cappuccino", Price = 3.10m },
            new() { Id = 3, Name = "Flat white", Price = 3.40m },
            new() { Id = 4, Name = "Green tea", Price = 2.50m },
            new() { Id = 5, Name = "Hot chocolate", Price = 3.00m },
            new() { Id = 6, Name = "Croissant", Price = 2.75m },
            new() { Id = 7, Name = "Pain au chocolat", Price = 2.95m },
            new() { Id = 8, Name = "Bagel & cream cheese", Price = 4.50m },
            new() { Id = 9, Name = "Lemon tart", Price = 5.25m },
            new() { Id = 10, Name = "Apple pie", Price = 4.10m },
            new() { Id = 11, Name = "Cheesecake", Price = 4.80m },
            new() { Id = 12, Name = "Fish & chips", Price = 9.90m },
            new() { Id = 13, Name = "Soup of the day", Price = 5.60m },
            new() { Id = 14, Name = "Caesar salad", Price = 7.30m },
            new() { Id = 15, Name = "Club sandwich", Price = 6.90m },
            new() { Id = 16, Name = "Sparkling water", Price = 1.80m },
        ],
    };
}
