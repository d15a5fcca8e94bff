import { check } from "k6";
import http from "k6/http";
import { Counter } from "k6/metrics";

const URL = "http://127.0.0.1:49513/text";
const non2xx = new Counter("hostbench_non_2xx");
const transportErrors = new Counter("hostbench_errors");

export const options = {
  vus: 8,
  duration: "3000ms",
  summaryTrendStats: ["avg", "min", "med", "max", "p(50)", "p(90)", "p(99)"],
};

export default function () {
  const response = http.get(URL);
  check(response, {
    "is status 200": (r) => r.status === 200,
  });
  if (response.status === 0) {
    transportErrors.add(1);
  } else if (response.status < 200 || response.status > 299) {
    non2xx.add(1);
  }
}

export function handleSummary(data) {
  return { "/tmp/pytest-of-root/pytest-71/runs0/ci-quick/jcsi2018/nginx__text__k6__c8__r1/load/summary.json": JSON.stringify(data, null, 1) };
}
