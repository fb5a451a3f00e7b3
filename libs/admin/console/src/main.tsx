import { render } from 'preact';
import { useState } from 'preact/hooks';

function App() {
  const [n, setN] = useState(0);
  return (
    <main>
      <h1>Approvals console</h1>
      <button type="button" onClick={() => setN(n + 1)}>
        Clicked {n}
      </button>
    </main>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
