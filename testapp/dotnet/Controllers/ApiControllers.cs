using System.Diagnostics;
using Microsoft.AspNetCore.Mvc;

namespace TestApp.Controllers;

// Endpoints of the companion articles.

/// <summary>Go (Iris) vs .NET Core 2017: GET api/values/{id} returns "value".</summary>
[Route("api/[controller]")]
public class ValuesController : Controller
{
    [HttpGet("{id}")]
    public string Get(int id) => "value";
}

/// <summary>... and its templates test: the home page at /, a static Razor view in a layout
/// (Views/Templates/Index.cshtml), as the article's HomeController served the MVC template's.</summary>
[Route("")]
public class TemplatesController : Controller
{
    [HttpGet]
    public IActionResult Index() => View();
}

/// <summary>Web API self-host vs IIS 2012 and Linux proxies 2021: a string ...</summary>
[Route("api/test")]
public class TestController(AppOptions options) : Controller
{
    [HttpGet]
    // The 2021 article's body exactly: .NET's default DateTime text. With invariant
    // globalization (TestApp.csproj) that is "MM/dd/yyyy HH:mm:ss", 19 characters. With
    // --api-test-body trace-id, what the article returned instead in its postscript.
    public string Get() => options.ApiTestBody == "trace-id"
        ? $"Test {Activity.Current?.Id ?? HttpContext.TraceIdentifier}"
        : $"Test {DateTime.UtcNow}";
}

/// <summary>... and a list of three Foo as JSON.</summary>
[Route("api/testapi")]
public class TestApiController : Controller
{
    [HttpGet]
    public IList<Foo> GetAll()
    {
        var now = DateTime.UtcNow;
        return new List<Foo>
        {
            new() { Id = 1, Name = "Foo 1", CreatedOn = now },
            new() { Id = 2, Name = "Foo 2", CreatedOn = now },
            new() { Id = 3, Name = "Foo 3", CreatedOn = now },
        };
    }
}
