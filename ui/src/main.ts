import { mount } from "svelte";
import "./app.css";

// One UI source, two builds: the desktop window (`vite build`) and the browser page of
// `concord serve` (`vite build --mode web`), which holds only the rater's screens.
const target = document.getElementById("app");
if (!target) throw new Error("index.html lacks #app");
const root = import.meta.env.MODE === "web" ? import("./components/web/WebApp.svelte") : import("./App.svelte");
void root.then(({ default: Root }) => mount(Root, { target }));
