using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime;
using System.Runtime.CompilerServices;
using System.Text.Json;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.Options;

namespace TestApp;

/// <summary>
/// GET /__transport (not counted): the transport settings Kestrel really runs with, so a study
/// can check that its options reached the server (Kestrel transports 2018).
/// </summary>
public static class TransportInfo
{
    /// <summary>The env var that makes System.Net.Sockets run socket completions on its epoll thread.</summary>
    public const string InlineCompletionsVariable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";

    /// <summary>
    /// {"server", "transport", "ioQueueCount", "unsafePreferInlineScheduling",
    /// "waitForDataBeforeAllocatingBuffer", "inlineCompletionsEnv", "inlineCompletionsEngine",
    /// "processorCount", "runtime", "build", "gc", "gcConcurrent", "gcHeapCount"} as UTF-8 JSON. The socket options are the IOptions instance the Sockets
    /// transport factory is built with (defaults included); inlineCompletionsEnv is whether the env
    /// var is "1" in this process, inlineCompletionsEngine what System.Net.Sockets' engine read from
    /// it at start (null where the runtime does not expose it).
    /// </summary>
    public static byte[] Json(IServiceProvider services, string server)
    {
        var factories = services.GetServices<IConnectionListenerFactory>()
            .Select(f => f.GetType().Name).ToArray();
        var s = services.GetRequiredService<IOptions<SocketTransportOptions>>().Value;
        using var buffer = new MemoryStream();
        using (var w = new Utf8JsonWriter(buffer))
        {
            w.WriteStartObject();
            w.WriteString("server", server);
            w.WriteString("transport", factories.Length > 0 ? string.Join(",", factories) : "none");
            w.WriteNumber("ioQueueCount", s.IOQueueCount);
            w.WriteBoolean("unsafePreferInlineScheduling", s.UnsafePreferInlineScheduling);
            w.WriteBoolean("waitForDataBeforeAllocatingBuffer", s.WaitForDataBeforeAllocatingBuffer);
            w.WriteBoolean("inlineCompletionsEnv", Environment.GetEnvironmentVariable(InlineCompletionsVariable) == "1");
            if (EngineInlineCompletions() is { } engine)
            {
                w.WriteBoolean("inlineCompletionsEngine", engine);
            }
            else
            {
                w.WriteNull("inlineCompletionsEngine");
            }
            w.WriteNumber("processorCount", Environment.ProcessorCount);
            // The runtime this process runs on, e.g. "8.0.31": every row records it.
            w.WriteString("runtime", Environment.Version.ToString());
            // How it was compiled and the GC it runs with, as the process itself sees them
            // (runtime_variants.py names the same three GC settings).
            w.WriteString("build", RuntimeFeature.IsDynamicCodeSupported ? "jit" : "aot");
            var gc = GC.GetConfigurationVariables();
            w.WriteString("gc", GcSetting(gc));
            w.WriteBoolean("gcConcurrent", gc.TryGetValue("ConcurrentGC", out var concurrent) && concurrent is true);
            w.WriteNumber("gcHeapCount", gc.TryGetValue("HeapCount", out var heaps) ? Convert.ToInt64(heaps) : 1);
            w.WriteEndObject();
        }
        return buffer.ToArray();
    }

    /// <summary>"workstation", "server", or "datas" (server GC adapting its heap count to the
    /// load: dynamic adaptation, on by default with server GC from .NET 9).</summary>
    private static string GcSetting(IReadOnlyDictionary<string, object> gc)
    {
        if (!GCSettings.IsServerGC)
        {
            return "workstation";
        }
        var mode = gc.TryGetValue("GCDynamicAdaptationMode", out var m) ? Convert.ToInt64(m) : 0;
        return mode == 1 ? "datas" : "server";
    }

    /// <summary>System.Net.Sockets' own reading of the env var (a private static of its Unix engine).</summary>
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "null where the member is not there, trimmed included")]
    [UnconditionalSuppressMessage("Trimming", "IL2075", Justification = "null where the member is not there, trimmed included")]
    private static bool? EngineInlineCompletions()
    {
        var engine = typeof(System.Net.Sockets.Socket).Assembly.GetType("System.Net.Sockets.SocketAsyncEngine");
        var flags = BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public;
        var field = engine?.GetField("InlineSocketCompletionsEnabled", flags);
        if (field is not null && field.FieldType == typeof(bool))
        {
            return (bool?)field.GetValue(null);
        }
        var property = engine?.GetProperty("InlineSocketCompletionsEnabled", flags);
        return property is not null && property.PropertyType == typeof(bool)
            ? (bool?)property.GetValue(null)
            : null;
    }
}
