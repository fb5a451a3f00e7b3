/** A table's caption and column headers. */
export function TableHead(props: { caption: string; columns: readonly string[] }) {
  return (
    <>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th key={c} scope="col">
              {c}
            </th>
          ))}
        </tr>
      </thead>
    </>
  );
}
