using System.Text.Json;

namespace TestApp;

/// <summary>
/// Served requests per endpoint. One Interlocked.Increment per counted request, on a fixed
/// array indexed by a route id resolved from the path without allocating.
/// </summary>
public static class RequestCounter
{
    /// <summary>
    /// Counted endpoints; the index is the route id. /api/values/{id} counts as /api/values,
    /// /api/values-minimal/{id} as /api/values-minimal; "/" is the templates scenario's home page.
    /// </summary>
    public static readonly string[] Names =
    [
        "/html", "/text", "/json", "/xml",
        "/api/values", "/api/test", "/api/testapi",
        "/plaintext", "/hello-json",
        "/", "/api/values-minimal",
    ];

    public const int Html = 0, Text = 1, Json = 2, Xml = 3, ApiValues = 4, ApiTest = 5, ApiTestApi = 6,
        Plaintext = 7, HelloJson = 8, Templates = 9, ApiValuesMinimal = 10, None = -1;

    private static readonly long[] Counts = new long[Names.Length];

    /// <summary>The route id of a request path (case-insensitive, one trailing slash allowed), or None.</summary>
    public static int RouteId(ReadOnlySpan<char> path)
    {
        if (path.Length > 1 && path[^1] == '/')
        {
            path = path[..^1];
        }
        switch (path.Length)
        {
            case 1: return path[0] == '/' ? Templates : None;
            case 4: return Eq(path, "/xml") ? Xml : None;
            case 5: return Eq(path, "/html") ? Html : Eq(path, "/text") ? Text : Eq(path, "/json") ? Json : None;
            case 9: return Eq(path, "/api/test") ? ApiTest : None;
            case 10: return Eq(path, "/plaintext") ? Plaintext : None;
            case 11:
                return Eq(path, "/hello-json") ? HelloJson : Eq(path, "/api/values") ? ApiValues : None;
            case 12: return Eq(path, "/api/testapi") ? ApiTestApi : None;
            case 19: return Eq(path, "/api/values-minimal") ? ApiValuesMinimal : None;
        }
        if (path.Length > 12 && path.StartsWith("/api/values/", StringComparison.OrdinalIgnoreCase)
            && path[12..].IndexOf('/') < 0)
        {
            return ApiValues;
        }
        if (path.Length > 20 && path.StartsWith("/api/values-minimal/", StringComparison.OrdinalIgnoreCase)
            && path[20..].IndexOf('/') < 0)
        {
            return ApiValuesMinimal;
        }
        return None;
    }

    private static bool Eq(ReadOnlySpan<char> a, string b) => a.Equals(b, StringComparison.OrdinalIgnoreCase);

    public static void Increment(int routeId) => Interlocked.Increment(ref Counts[routeId]);

    public static void Reset()
    {
        for (var i = 0; i < Counts.Length; i++)
        {
            Interlocked.Exchange(ref Counts[i], 0);
        }
    }

    /// <summary>{"total": N, "endpoints": {"/html": n, ...}, "jit_methods": m} as UTF-8 JSON.
    /// jit_methods: methods the JIT has compiled so far, in every tier. Under load it grows
    /// while tiered compilation recompiles hot methods; the harness's warm-up waits until
    /// it stops growing, since the rate jumps when it does.</summary>
    public static byte[] SnapshotJson()
    {
        var values = new long[Counts.Length];
        long total = 0;
        for (var i = 0; i < Counts.Length; i++)
        {
            values[i] = Interlocked.Read(ref Counts[i]);
            total += values[i];
        }
        using var buffer = new MemoryStream();
        using (var w = new Utf8JsonWriter(buffer))
        {
            w.WriteStartObject();
            w.WriteNumber("total", total);
            w.WriteStartObject("endpoints");
            for (var i = 0; i < Names.Length; i++)
            {
                w.WriteNumber(Names[i], values[i]);
            }
            w.WriteEndObject();
            w.WriteNumber("jit_methods", System.Runtime.JitInfo.GetCompiledMethodCount());
            w.WriteEndObject();
        }
        return buffer.ToArray();
    }
}
