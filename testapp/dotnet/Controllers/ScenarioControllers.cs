using Microsoft.AspNetCore.Mvc;

namespace TestApp.Controllers;

// The paper's four scenarios, one MVC controller each.

[Route("html")]
public class HtmlController : Controller
{
    /// <summary>Views/Html/Index.cshtml: 100 buttons and 10 select lists of 10 options.</summary>
    [HttpGet]
    public IActionResult Index() => View();
}

[Route("text")]
public class TextController : Controller
{
    [HttpGet]
    public IActionResult Index() => Content(Payloads.Text, "text/plain; charset=utf-8");
}

[Route("json")]
public class JsonController : Controller
{
    /// <summary>System.Text.Json with MVC's defaults (camelCase).</summary>
    [HttpGet]
    public IActionResult Index() => Json(Payloads.NewSimpleClass());
}

[Route("xml")]
public class XmlController : Controller
{
    /// <summary>XmlSerializerOutputFormatter (AddXmlSerializerFormatters), as the 2018 app.</summary>
    [HttpGet]
    [Produces("application/xml")]
    public IActionResult Index() => Ok(Payloads.NewSimpleClass());
}
