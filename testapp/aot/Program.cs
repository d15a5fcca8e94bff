// TestAppAot: the test app's endpoints that Native AOT can serve, on minimal APIs (README.md).
using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.HttpOverrides;
using TestApp;

if (Startup.ParseOrSay("TestAppAot", args) is not { } options)
{
    return 2;
}
// This app has no MVC and runs on Kestrel alone: an option asking otherwise is refused, not ignored.
if (options.Mvc != "full" || options.Server != "kestrel")
{
    Console.Error.WriteLine("TestAppAot: --mvc and --server do not apply: this app serves minimal APIs on Kestrel only");
    return 2;
}

var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions
{
    Args = [],
    ContentRootPath = AppContext.BaseDirectory,
});
builder.Logging.ClearProviders();
builder.Logging.AddSimpleConsole(c => c.SingleLine = true);
builder.Logging.SetMinimumLevel(options.LogLevel);
builder.Logging.AddFilter("Microsoft.Extensions.Hosting.Internal.Host", LogLevel.None);
builder.WebHost.UseUrls(options.Urls.Split(';'));
builder.WebHost.UseSocketOptions(options);
builder.Services.ConfigureHttpJsonOptions(j => j.SerializerOptions.TypeInfoResolverChain.Insert(0, AotJson.Default));
builder.Services.Configure<ForwardedHeadersOptions>(f => f.ForwardedHeaders = ForwardedHeaders.All);

var app = builder.Build();
app.UseForwardedHeaders();

// The scenarios, each answering as the test app does (content type, length, body).
var plaintext = "Hello, World!"u8.ToArray();
var text = System.Text.Encoding.UTF8.GetBytes(Payloads.Text);
app.MapGet("/plaintext", () =>
{
    RequestCounter.Increment(RequestCounter.Plaintext);
    return new Bytes("text/plain", plaintext);
});
app.MapGet("/hello-json", () =>
{
    RequestCounter.Increment(RequestCounter.HelloJson);
    return new Bytes("application/json",
        JsonSerializer.SerializeToUtf8Bytes(new HelloMessage { Message = "Hello, World!" }, AotJson.Default.HelloMessage));
});
app.MapGet("/text", () =>
{
    RequestCounter.Increment(RequestCounter.Text);
    return new Bytes("text/plain; charset=utf-8", text);
});
app.MapGet("/json", () =>
{
    RequestCounter.Increment(RequestCounter.Json);
    return TypedResults.Json(Payloads.NewSimpleClass(), AotJson.Default.SimpleClass);
});
// Go vs .NET Core 2017's endpoint, at the article's path, as the test app's minimal API has it
// (--mvc none): the values scenario, counted as /api/values. A string result, written as MVC's
// and the test app's minimal API write it (text/plain; charset=utf-8, no Content-Length).
app.MapGet("/api/values/{id}", (int id) =>
{
    RequestCounter.Increment(RequestCounter.ApiValues);
    return "value";
});

// Harness endpoints, as the test app has them: not counted.
app.MapGet("/health", () => TypedResults.Text("ok", "text/plain"));
app.MapGet("/__stats", () => new Bytes("application/json", RequestCounter.SnapshotJson()));
app.MapPost("/__stats/reset", () =>
{
    RequestCounter.Reset();
    return new Bytes("application/json", RequestCounter.SnapshotJson());
});
app.MapGet("/__transport", (IServiceProvider services) =>
    new Bytes("application/json", TransportInfo.Json(services, options.Server)));

try
{
    await app.StartAsync();
}
catch (Exception e)
{
    Console.Error.WriteLine($"TestAppAot: cannot start: {e.GetType().Name}: {e.Message.ReplaceLineEndings(" ")}");
    return 1;
}
await app.WaitForShutdownAsync();
return 0;

/// <summary>A 200 with these bytes, their length and content type: what the test app's own
/// helper writes (Program.cs WriteAsync), as a minimal API's result.</summary>
internal sealed class Bytes(string contentType, byte[] body) : IResult
{
    public Task ExecuteAsync(HttpContext context)
    {
        var response = context.Response;
        response.StatusCode = 200;
        response.ContentType = contentType;
        response.ContentLength = body.Length;
        return response.Body.WriteAsync(body, 0, body.Length);
    }
}

/// <summary>The TechEmpower JSON scenario's message, as the test app's.</summary>
internal sealed class HelloMessage
{
    public string Message { get; set; } = "";
}

/// <summary>Source-generated serialization with the test app's settings (JsonSerializerDefaults.Web: camelCase).</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(SimpleClass))]
[JsonSerializable(typeof(HelloMessage))]
internal sealed partial class AotJson : JsonSerializerContext;
