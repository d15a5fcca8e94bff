using System.Reflection;
using System.Text;
using System.Text.Json;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.ApplicationParts;
using Microsoft.AspNetCore.Mvc.Controllers;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.Options;
using TestApp.Controllers;

namespace TestApp;

/// <summary>
/// The paper's four scenarios produced in-process, without a server: the app's own MVC
/// services (<see cref="TestAppMvc.AddTestAppMvc"/>), the scenario's controller action, and
/// the <see cref="IActionResult"/> it returns executed by MVC's own executor (the Razor view,
/// ContentResult, JsonResult with MVC's JSON options, ObjectResult through the XmlSerializer
/// formatter) into an in-memory response body.
/// </summary>
/// <remarks>
/// What a request through Kestrel does besides: connection and HTTP parsing, the middleware
/// (forwarded headers, the request counter), routing, the filter pipeline (only
/// <c>[Produces]</c> matters here: it is applied the way its filter applies it) and writing
/// the headers and body to the socket. Each call gets what a request gets: a service scope and
/// a fresh HttpContext (Kestrel pools its HttpContext; see <see cref="ExecuteEmptyAsync"/>).
/// The body goes into one reused MemoryStream, as Kestrel writes into pooled buffers.
/// Used by notebooks/00-testapp-tour.ipynb; the web app itself does not use it.
/// </remarks>
public sealed class InMemoryApp : IDisposable
{
    /// <summary>The scenario ids, as the harness names them (hostbench/scenarios.py).</summary>
    public static IReadOnlyList<string> Scenarios { get; } = ["html", "text", "json", "xml"];

    private readonly WebApplication _host;
    private readonly IServiceScopeFactory _scopes;
    private readonly MemoryStream _body = new(64 * 1024);
    private readonly ProducesAttribute _xmlProduces;
    private readonly Dictionary<string, (ControllerActionDescriptor Action, RouteData Route, PathString Path)> _actions = new();

    public InMemoryApp()
    {
        var builder = WebApplication.CreateBuilder(new WebApplicationOptions
        {
            Args = [],
            // MVC finds the controllers and the compiled views in the application's assembly.
            ApplicationName = typeof(InMemoryApp).Assembly.GetName().Name,
            ContentRootPath = AppContext.BaseDirectory,
        });
        builder.Logging.ClearProviders();
        builder.Logging.SetMinimumLevel(LogLevel.Warning); // the app's default --log-level
        // MVC would find the controllers and compiled views by loading ApplicationName's
        // assembly by name, which fails where TestApp.dll was loaded by path (`#r` in .NET
        // Interactive). So the app's parts are named here, from the assembly already loaded:
        // the same parts, and AddTestAppMvc takes this manager instead of making its own.
        builder.Services.AddSingleton(AppPartManager(typeof(InMemoryApp).Assembly));
        builder.Services.AddTestAppMvc();
        _host = builder.Build(); // never started: no server, no port
        _scopes = _host.Services.GetRequiredService<IServiceScopeFactory>();
        JsonSerializerOptions = _host.Services.GetRequiredService<IOptions<JsonOptions>>().Value.JsonSerializerOptions;
        _xmlProduces = typeof(XmlController).GetMethod(nameof(XmlController.Index))!
            .GetCustomAttribute<ProducesAttribute>()!;
        foreach (var (scenario, controller) in new[] { ("html", "Html"), ("text", "Text"), ("json", "Json"), ("xml", "Xml") })
        {
            var route = new RouteData();
            route.Values["controller"] = controller;
            route.Values["action"] = "Index";
            var action = new ControllerActionDescriptor
            {
                ControllerName = controller,
                ActionName = "Index",
                RouteValues = new Dictionary<string, string?> { ["controller"] = controller, ["action"] = "Index" },
            };
            _actions[scenario] = (action, route, new PathString("/" + scenario));
        }
    }

    private static ApplicationPartManager AppPartManager(Assembly app)
    {
        var manager = new ApplicationPartManager();
        foreach (var part in ApplicationPartFactory.GetApplicationPartFactory(app).GetApplicationParts(app))
        {
            manager.ApplicationParts.Add(part); // the controllers, and the compiled Razor views
        }
        return manager;
    }

    /// <summary>The options JsonController's <c>Json(...)</c> serializes with (MVC's JsonOptions).</summary>
    public JsonSerializerOptions JsonSerializerOptions { get; }

    /// <summary>The last response's Content-Type header.</summary>
    public string? ContentType { get; private set; }

    /// <summary>The last response's body.</summary>
    public ReadOnlySpan<byte> Body => _body.GetBuffer().AsSpan(0, (int)_body.Length);

    /// <summary>The last response's body length in bytes.</summary>
    public int BodyLength => (int)_body.Length;

    /// <summary>The last response's body as text (the app writes UTF-8).</summary>
    public string BodyText => Encoding.UTF8.GetString(Body);

    /// <summary>One scenario's action and result into the in-memory response body.</summary>
    /// <returns>A task that is complete on return when nothing waited (the usual case).</returns>
    public async Task ExecuteAsync(string scenario)
    {
        if (!_actions.TryGetValue(scenario, out var a))
        {
            throw new ArgumentException($"unknown scenario '{scenario}'; allowed: {string.Join(", ", Scenarios)}", nameof(scenario));
        }
        _body.SetLength(0);
        await using var scope = _scopes.CreateAsyncScope();
        var http = NewHttpContext(scope.ServiceProvider, a.Path);
        var context = new ActionContext(http, a.Route, a.Action);
        var controllerContext = new ControllerContext(context);
        // As MVC: a controller per request, its action, the result executed, then disposal.
        Controller controller;
        IActionResult result;
        switch (scenario)
        {
            case "html":
                var html = new HtmlController { ControllerContext = controllerContext };
                (controller, result) = (html, html.Index());
                break;
            case "text":
                var text = new TextController { ControllerContext = controllerContext };
                (controller, result) = (text, text.Index());
                break;
            case "json":
                var json = new JsonController { ControllerContext = controllerContext };
                (controller, result) = (json, json.Index());
                break;
            default:
                var xml = new XmlController { ControllerContext = controllerContext };
                (controller, result) = (xml, xml.Index());
                // What [Produces("application/xml")] does as a result filter.
                _xmlProduces.SetContentTypes(((ObjectResult)result).ContentTypes);
                break;
        }
        using (controller)
        {
            await result.ExecuteResultAsync(controllerContext);
        }
        ContentType = http.Response.ContentType;
    }

    /// <summary>
    /// What every <see cref="ExecuteAsync"/> call costs besides the scenario: the service scope
    /// and the HttpContext, no controller, no body. Timing it shows how much of a payload's
    /// cost is this harness (a request through Kestrel creates a scope too, but reuses a pooled
    /// HttpContext).
    /// </summary>
    public async Task ExecuteEmptyAsync()
    {
        _body.SetLength(0);
        await using var scope = _scopes.CreateAsyncScope();
        ContentType = NewHttpContext(scope.ServiceProvider, PathString.Empty).Response.ContentType;
    }

    private DefaultHttpContext NewHttpContext(IServiceProvider services, PathString path)
    {
        var http = new DefaultHttpContext { RequestServices = services };
        http.Request.Method = HttpMethods.Get;
        http.Request.Path = path;
        http.Response.Body = _body;
        return http;
    }

    /// <summary>One scenario's response body as text.</summary>
    public async Task<string> RenderAsync(string scenario)
    {
        await ExecuteAsync(scenario);
        return BodyText;
    }

    public void Dispose()
    {
        _body.Dispose();
        ((IDisposable)_host).Dispose();
    }
}
